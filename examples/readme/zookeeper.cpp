// The README's ZooKeeper snippets, compiled and run (example_readme_zookeeper,
// a ctest test) against a throwaway server, or the one named on the command
// line. Each snippet sits between `// [readme:NAME]` and `// [/readme:NAME]`;
// tests/unit/test_readme.cpp checks that README.md shows exactly that text.
//
//   example_readme_zookeeper [--first-lock PROGRAM] [HOSTS]
//
// --first-lock also runs the README's first program (first_lock/, a whole
// program of its own) against the same server, with ZKLOCK_CONNECT set, and
// against a closed loopback port, where it must say why and exit 1 (not die
// in std::terminate).
#include <zklock/zklock.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <sys/wait.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>

namespace {

// What the snippets call: stand-ins for the user's own code.
int writes = 0;
void write_to_resource(std::int64_t token) {
    if (token <= 0) throw std::runtime_error("a hold without a fencing token");
    ++writes;
}
void run_report(std::int64_t epoch) { write_to_resource(epoch); }
std::string read_secret() { return "example-secret"; }

void blocking(const std::string& hosts) {
    // [readme:blocking]
    zklock::SessionOptions options;
    options.connect = hosts;                         // e.g. "10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181"
    options.session_timeout = std::chrono::seconds(10);  // the server clamps it to 2-20 x its tickTime

    zklock::Session session(options);   // runs its own I/O thread
    session.connect();                  // throws zklock::error after connect_timeout

    zklock::Mutex lock(session, "/locks/orders-42");
    lock.on_lost([](std::error_code why) { /* stop using the resource */ });

    {
        std::unique_lock guard(lock);                 // waits its turn
        write_to_resource(lock.fencing_token());      // let the resource refuse stale holders
    }                                                 // released here (unlock() never throws)

    if (lock.try_lock_for(std::chrono::seconds(2))) { /* ... */ lock.unlock(); }
    // [/readme:blocking]
}

void asynchronous(const std::string& hosts) {
    zklock::SessionOptions options;
    options.connect = hosts;
    // [readme:async]
    boost::asio::io_context ioc;
    zklock::Session session(ioc.get_executor(), options);
    zklock::Mutex lock(session, "/locks/report");

    // Handlers take a std::error_code, so co_await returns it rather than throwing.
    auto job = [&]() -> boost::asio::awaitable<std::error_code> {
        if (auto ec = co_await session.async_connect(boost::asio::use_awaitable)) co_return ec;
        if (auto ec = co_await lock.async_lock(boost::asio::use_awaitable)) co_return ec;  // cancellable; leaves no node
        // Completes when this hold ends: with the loss reason, or with an empty code
        // once unlock() releases it (asked when nothing is held: errc::not_held at once).
        lock.async_wait_lost([](std::error_code why) { if (why) { /* stop using the resource */ } });
        write_to_resource(lock.fencing_token());
        co_return co_await lock.async_unlock(boost::asio::use_awaitable);
    };
    // The session keeps ioc.run() busy (its socket, its timers) until it is closed.
    boost::asio::co_spawn(ioc, job(), [&](std::exception_ptr, std::error_code) { session.close(); });
    ioc.run();
    // [/readme:async]
}

void recipes(zklock::Session& session) {
    // [readme:recipes]
    // Leader election: only the leader runs the periodic job.
    zklock::LeaderElection election(session, "/elections/report-job", "host-7");
    zklock::RunAsLeaderOptions once;
    once.rejoin = false;  // the default (true) campaigns again after each term, until the stop_token says stop
    election.run_as_leader([](std::stop_token stop, const zklock::Leadership& term) {
        run_report(term.epoch);   // stop is requested the moment leadership is lost: check it in a long task
    }, once);

    // Fair worker queue: at most 3 at once, served in arrival order.
    zklock::Semaphore slots(session, "/queues/encoder", 3);
    zklock::QueueLock slot = slots.permit();                    // one contender for one of the 3 places
    slot.on_queue_position([](std::size_t place) { std::cout << "place in line: " << place << "\n"; });
    std::unique_lock in_slot(slot);                            // released when it goes out of scope

    // Read-write lock: std::shared_lock for readers, std::unique_lock for writers.
    zklock::SharedMutex config(session, "/locks/config");
    { std::shared_lock read(config); /* many readers at once */ }
    { std::unique_lock write(config); /* alone; readers that came later wait */ }
    // [/readme:recipes]
}

void acl(const std::string& hosts) {
    // [readme:acl]
    zklock::SessionOptions options;
    options.connect = hosts;                                       // e.g. "10.0.0.1:2181"
    options.auth = {{"digest", "svc-billing:" + read_secret()}};   // never printed by zklock
    options.acl = zklock::acls::creator_all_world_read();          // auth::cdrwa,world:anyone:r
    zklock::Session session(options);
    zklock::Mutex lock(session, "/locks/billing/orders-42");       // its directory and nodes get that ACL
    // [/readme:acl]
    session.connect();
    std::unique_lock guard(lock);
    write_to_resource(lock.fencing_token());
}

void multi(zklock::Session& session) {
    // [readme:multi]
    zklock::MultiMutex both(session, {"/locks/account-17", "/locks/account-4"});
    std::unique_lock transfer(both);   // held when first in both queues; unlock deletes both nodes in one transaction
    // [/readme:multi]
    write_to_resource(both.fencing_token());
}

void guarded(zklock::Session& session) {
    try {
        zklock::testing::create_node(session, "/orders");
    } catch (const zklock::error&) {  // a server that has it already
    }
    // [readme:guarded]
    zklock::Mutex lock(session, "/locks/orders");
    std::unique_lock hold(lock);
    // One transaction: applied only if our lock node still exists, all or nothing.
    auto r = lock.commit_guarded({zklock::guarded_op::sequential("/orders/order-", "42 widgets"),
                                  zklock::guarded_op::check("/orders")});
    std::cout << "wrote " << r.created[0] << "\n";
    // [/readme:guarded]
}

void revocation(zklock::Session& session) {
    std::promise<void> stopped;
    const auto stop_work = [&] { stopped.set_value(); };
    // [readme:revocation]
    zklock::MutexOptions options;
    options.revocable = true;   // let go when asked, as Curator's makeRevocable() (or set on_revocation)
    zklock::Mutex job(session, "/locks/nightly", options);
    job.on_lost([&](std::error_code why) { if (why == zklock::errc::revoked) stop_work(); });
    job.lock();

    // Elsewhere: another process, `zklock revoke /locks/nightly`, or Curator's Revoker.attemptRevoke.
    zklock::Mutex urgent(session, "/locks/nightly");
    urgent.revoke_holders();    // writes "__REVOKE__" into the holder's node
    urgent.lock();              // granted once `job` has let go
    // [/readme:revocation]
    if (stopped.get_future().wait_for(std::chrono::seconds(10)) != std::future_status::ready || job.is_held())
        throw std::runtime_error("the revocation snippet: the revocable holder did not let go");
    write_to_resource(urgent.fencing_token());
    urgent.unlock();
}

void logging(const std::string& hosts) {
    // [readme:logging]
    zklock::SessionOptions options;
    options.log = {zklock::log_level::info, [](const zklock::log_record& r) {
                       // On the session's thread: copy what you need, do not block.
                       std::cerr << '[' << r.source << "] " << r.message << '\n';
                   }};
    // [/readme:logging]
    options.connect = hosts;
    zklock::Session session(options);
    session.connect();
}

void metrics(const std::string& hosts) {
    zklock::SessionOptions options;
    options.connect = hosts;
    // [readme:metrics]
    zklock::lock_metrics metrics;             // declared before the Session: it outlives it
    zklock::Session session(options);
    session.connect();
    zklock::Mutex lock(session, "/locks/report");
    lock.on_event(metrics.handler());
    // ... serve metrics.prometheus_text() at /metrics
    // [/readme:metrics]
    // The events run on the session's executor before the completion of what
    // caused them; a blocking lock() may return before they have run.
    std::promise<std::string> text;
    lock.async_lock([&](std::error_code ec) {
        if (!ec) write_to_resource(lock.fencing_token());
        text.set_value(metrics.prometheus_text());
    });
    const auto shown = text.get_future().get();
    lock.unlock();
    if (shown.find("zklock_lock_acquisitions_total{path=\"/locks/report\"} 1\n") == std::string::npos)
        throw std::runtime_error("the metrics snippet counted no acquisition:\n" + shown);
}

// Runs the README's first program with ZKLOCK_CONNECT=hosts; true when it held the lock.
bool first_lock(const std::string& program, const std::string& hosts) {
    zklock::testing::TempDir dir("zklock-readme-");
    const auto output = dir.path() / "output";
    zklock::testing::ChildProcessOptions child_options;
    child_options.env = {{"ZKLOCK_CONNECT", hosts}};
    child_options.output_path = output;
    zklock::testing::ChildProcess child({program}, child_options);
    const auto status = child.wait_exit(std::chrono::seconds(60));
    std::ifstream in(output);
    const std::string shown{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!status || *status != 0 || shown.find("holding /locks/x, fencing token ") == std::string::npos) {
        std::cerr << "readme snippets: " << program << " "
                  << (status ? zklock::testing::describe_wait_status(*status) : "did not exit within 60 s")
                  << ", printed:\n" << shown;
        return false;
    }
    return true;
}

// Runs the README's first program with ZKLOCK_CONNECT on a closed port; true
// when it exited 1 with its "first_lock: " message and no std::terminate text.
bool first_lock_without_server(const std::string& program) {
    zklock::testing::TempDir dir("zklock-readme-");
    const auto output = dir.path() / "output";
    zklock::testing::ChildProcessOptions child_options;
    child_options.env = {{"ZKLOCK_CONNECT", "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port())}};
    child_options.output_path = output;
    zklock::testing::ChildProcess child({program}, child_options);
    const auto status = child.wait_exit(std::chrono::seconds(60));
    std::ifstream in(output);
    const std::string shown{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const bool exited_1 = status && WIFEXITED(*status) && WEXITSTATUS(*status) == 1;
    if (!exited_1 || shown.rfind("first_lock: ", 0) != 0 || shown.find("terminate") != std::string::npos) {
        std::cerr << "readme snippets: " << program << " without a server "
                  << (status ? zklock::testing::describe_wait_status(*status) : "did not exit within 60 s")
                  << " (expected exit 1 and a first_lock: message), printed:\n" << shown;
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    std::string first_lock_program;
    std::string hosts;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--first-lock" && i + 1 < argc) first_lock_program = argv[++i];
        else hosts = arg;
    }
    std::unique_ptr<zklock::testing::ZooKeeperServer> server;
    if (hosts.empty()) {
        server = std::make_unique<zklock::testing::ZooKeeperServer>();
        hosts = server->connect_string();
    }
    blocking(hosts);
    asynchronous(hosts);
    zklock::SessionOptions options;
    options.connect = hosts;
    zklock::Session session(options);
    session.connect();
    recipes(session);
    multi(session);
    guarded(session);
    revocation(session);
    acl(hosts);
    logging(hosts);
    metrics(hosts);
    // blocking 1, async 1, the leader's term 1, the lock set 1, revocation 1, acl 1, metrics 1.
    if (writes != 7) {
        std::cerr << "readme snippets: " << writes << " writes, expected 7\n";
        return 1;
    }
    if (!first_lock_program.empty() && !first_lock(first_lock_program, hosts)) return 1;
    if (!first_lock_program.empty() && !first_lock_without_server(first_lock_program)) return 1;
    std::cout << "readme snippets: every ZooKeeper snippet ran\n";
    return 0;
}
