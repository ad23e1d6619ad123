// The safe-time budget (Lock::safe_for()) against a real server: positive
// while the server answers, also across idle periods longer than the session
// timeout; zero when not held; and never positive at an instant when another
// client holds, under a partition (the holder's link blackholed) and a paused
// server; renewed on a reconnect before it runs out; and `zklock run` stops
// its command once the budget has run out.
#include "fault_support.hpp"
#include "support.hpp"
#include "test_cli_support.hpp"

#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/faulty_link.hpp>

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;

namespace {

using clock_type = std::chrono::steady_clock;

class SafeTimeTest : public ServerTest {
protected:
    // The suite hands its server on to the next suite of its ctest group.
    static void TearDownTestSuite() {}
    void TearDown() override {
        ServerTest::TearDown();
        expect_no_fault_leftovers();
    }

    // The instant until which `lock` is safe, as its budget says now.
    static clock_type::time_point safe_until(const Lock& lock) {
        const auto now = clock_type::now();
        return now + lock.safe_for().value_or(std::chrono::milliseconds(0));
    }
};

// The instant a waiter was granted, as its granted event reports it (the event
// runs after the grant: a later instant than the grant itself).
struct grant_time {
    std::atomic<clock_type::rep> at{0};
    void watch(QueueLock& lock) {
        lock.on_event([this](const lock_event& e) {
            if (e.kind == lock_event_kind::granted) at = clock_type::now().time_since_epoch().count();
        });
    }
    clock_type::time_point get() const { return clock_type::time_point(clock_type::duration(at.load())); }
};

} // namespace

TEST_F(SafeTimeTest, APositiveBudgetWhileTheServerAnswersAlsoWhenIdleAndNoneWhenNotHeld) {
    auto s = connect(2000ms);
    Mutex m(*s, lock_path());
    EXPECT_EQ(m.safe_for(), std::chrono::milliseconds(0)) << "not held";
    m.lock();
    const auto timeout = s->negotiated_timeout();
    ASSERT_GT(timeout.count(), 0);
    // Idle for longer than a session timeout: the session's own request every
    // third of it keeps the budget up (the C client's pings say nothing).
    std::chrono::milliseconds lowest = timeout;
    const auto until = clock_type::now() + timeout + timeout / 2;
    while (clock_type::now() < until) {
        const auto b = m.safe_for();
        ASSERT_TRUE(b.has_value());
        lowest = std::min(lowest, *b);
        std::this_thread::sleep_for(20ms);  // allowed: sampling an idle hold, whose idleness is what is tested
    }
    EXPECT_GT(lowest.count(), 0) << "the budget ran out on a healthy, idle hold";
    EXPECT_LE(m.safe_for().value_or(0ms), timeout);
    m.unlock();
    EXPECT_EQ(m.safe_for(), std::chrono::milliseconds(0)) << "released";
}

// The holder's link is blackholed: it hears nothing, its budget runs out, and
// the server expires its session; the next holder is granted only after the
// instant the old holder's budget ended.
TEST_F(SafeTimeTest, UnderAPartitionTheNextHolderIsGrantedOnlyAfterTheBudgetEnded) {
    ZKLOCK_REQUIRE_IPTABLES();
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    auto o = options(2000ms);
    o.connect = link.connect_string();
    Session a(o);
    a.connect();
    auto b = connect(2000ms);
    Mutex holder(a, path);
    Mutex next(*b, path);
    grant_time granted;
    granted.watch(next);
    holder.lock();
    ASSERT_GT(holder.safe_for().value_or(0ms).count(), 0);
    auto grant = next.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return next.queue_position() == 1u; }));

    link.blackhole();
    ASSERT_TRUE(wait_until([&] { return link.blackholed_packets() > 0; }, 10s));
    // Nothing is heard from now on: the end of the budget is fixed.
    const auto budget_end = safe_until(holder);
    EXPECT_FALSE(get_within(grant, 30s));
    ASSERT_NE(granted.at.load(), 0) << "no granted event";
    EXPECT_LE(budget_end, granted.get() + 1ms) << "the old holder's budget outlasted the next grant by "
                                               << std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      budget_end - granted.get()).count()
                                               << " ms";
    EXPECT_EQ(holder.safe_for(), std::chrono::milliseconds(0));
    next.unlock();
    link.heal();
    EXPECT_TRUE(wait_until([&] { return !holder.is_held(); }, 30s));
}

// The server is paused past the session timeout: the holder hears nothing and
// its budget runs out; if the resumed server expires the session, the next
// holder is granted only after the instant the budget ended; if the holder's
// session survives, it holds (and its budget is positive again) and the other
// does not.
TEST_F(SafeTimeTest, UnderAPausedServerTheBudgetEndsBeforeAnyoneElseHolds) {
    own_server();
    const auto path = lock_path();
    auto a = connect(2000ms);
    auto b = connect(2000ms);
    Mutex holder(*a, path);
    Mutex next(*b, path);
    grant_time granted;
    granted.watch(next);
    holder.lock();
    auto grant = next.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return next.queue_position() == 1u; }));

    ASSERT_TRUE(server_->pause_for(a->negotiated_timeout() * 3 / 2));
    const auto budget_end = safe_until(holder);
    EXPECT_TRUE(wait_until([&] { return holder.safe_for() == std::chrono::milliseconds(0); }, 10s))
        << "the budget outlasted a silent server";
    ASSERT_TRUE(wait_until([&] { return !server_->paused(); }, 30s));
    ASSERT_TRUE(wait_until(
        [&] {
            return grant.wait_for(0s) == std::future_status::ready ||
                   (holder.is_held() && holder.safe_for().value_or(0ms).count() > 0);
        },
        30s));
    if (grant.wait_for(0s) == std::future_status::ready) {
        EXPECT_FALSE(grant.get());
        EXPECT_LE(budget_end, granted.get() + 1ms);
        EXPECT_EQ(holder.safe_for(), std::chrono::milliseconds(0));
        next.unlock();
    } else {
        EXPECT_FALSE(next.is_held()) << "both hold";
        holder.unlock();
        EXPECT_FALSE(get_within(grant, 30s));
        next.unlock();
    }
}

// A server silent for most of a session timeout, then back before the session
// expires: the client reconnects to its session, and the hold's budget is
// renewed at once, before the basis it had from before the silence runs out
// (not a third of a timeout later, after `zklock run` would have stopped its
// command).
TEST_F(SafeTimeTest, AHoldKeptAcrossAReconnectHasItsBudgetRenewedBeforeItRunsOut) {
    own_server();
    auto s = connect(3000ms);
    EventLog events(*s);
    Mutex m(*s, lock_path());
    m.lock();
    const auto timeout = s->negotiated_timeout();
    ASSERT_TRUE(server_->pause());
    const auto budget_end = safe_until(m);  // nothing is heard from now on
    ASSERT_TRUE(events.wait_for(session_event::suspended, timeout * 2));
    // The server comes back with a quarter of the timeout left of the budget;
    // the session lives at least that long (the server also heard the pings).
    std::this_thread::sleep_until(budget_end - timeout / 4);  // allowed: the length of the fault
    ASSERT_TRUE(server_->resume());
    ASSERT_TRUE(events.wait_for(session_event::reconnected, timeout)) << "the session was not kept";
    // Renewed, it ends about three quarters of a timeout later than before.
    EXPECT_TRUE(wait_until([&] { return safe_until(m) > budget_end + timeout / 2; },
                           std::chrono::duration_cast<std::chrono::milliseconds>(budget_end - clock_type::now())))
        << "not renewed before it ran out, while connected";
    EXPECT_TRUE(m.is_held());
    m.unlock();
}

// `zklock run` cut off from the server: its command is stopped once the
// budget has run out (before the server may expire the session), and it exits
// 76 saying why.
TEST_F(SafeTimeTest, RunStopsItsCommandWhenTheBudgetRunsOut) {
    ZKLOCK_REQUIRE_IPTABLES();
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    cli::Cli cli;
    const auto pid_file = cli.file("pid");
    auto p = cli.start({"run", "-c", link.connect_string(), "--session-timeout", "2000", path, "--", "sh", "-c",
                        "echo $$ > \"$0\"; exec sleep 1000", pid_file.string()});
    const pid_t command = std::stoi(cli::wait_for_line(pid_file));
    link.blackhole();
    EXPECT_EQ(cli::exit_code(p), 76) << cli.output();
    EXPECT_NE(cli.output().find("no longer certainly held"), std::string::npos) << cli.output();
    EXPECT_TRUE(cli::process_gone(command));
    link.heal();
    auto s = connect();
    Mutex next(*s, path);
    EXPECT_TRUE(next.try_lock_for(30s));  // the server expired the session, or the release went through
    next.unlock();
}

// The moment the session is known to have expired, the hold's budget is zero:
// not once the next session is first heard from. A callback told of the
// expiry (before the lock hears of its loss) reads it.
TEST_F(SafeTimeTest, TheBudgetIsZeroAsSoonAsTheSessionIsKnownToHaveExpired) {
    auto s = connect(2000ms);
    Mutex m(*s, lock_path());
    m.lock();
    ASSERT_GT(m.safe_for().value_or(0ms).count(), 0);
    std::promise<std::chrono::milliseconds> at_expiry;
    std::atomic<bool> told{false};
    auto subscription = s->subscribe([&](session_event e, std::int64_t) {
        if (e == session_event::expired && !told.exchange(true)) at_expiry.set_value(m.safe_for().value_or(0ms));
    });
    zt::expire_session(*s);
    auto f = at_expiry.get_future();
    ASSERT_EQ(f.wait_for(20s), std::future_status::ready) << "no expiry was told";
    EXPECT_EQ(f.get(), 0ms) << "a positive budget for a session known to be gone";
}

// A hold adopted after a lost create reply (the guid found the node) on a
// session of which no write was answered has a budget from its first moment:
// its grant waited for a sync's answer. The Session's first session made the
// lock's directory known and expired, so the lock node's create is the first
// write of the new one, and its reply is lost.
TEST_F(SafeTimeTest, AHoldAdoptedAfterALostCreateReplyHasABudgetFromItsGrant) {
    const auto path = lock_path();
    auto observer = connect();
    create_parents(*observer, path);
    zt::create_node(*observer, path);  // persistent: no container for the server to reap meanwhile
    zt::FaultyLink link(server_->port());
    auto o = options(4000ms);
    o.connect = link.connect_string();
    Session s(o);
    s.connect();
    EventLog events(s);
    {
        Mutex first(s, path);  // the session knows the directory from now on
        first.lock();
        first.unlock();
    }
    zt::expire_session(s);
    ASSERT_TRUE(events.wait_for(session_event::expired));
    ASSERT_TRUE(events.wait_for(session_event::connected));
    link.drop_next_reply(path + "/_c_");
    Mutex m(s, path);
    ASSERT_TRUE(m.try_lock_for(20s));
    EXPECT_EQ(link.replies_dropped(), 1u);
    EXPECT_GT(m.safe_for().value_or(0ms).count(), 0) << "held with nothing to base its budget on";
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(path + "/" + queue[0].node, m.node_path()) << "not the adopted node";
    auto released = m.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
    zt::delete_node(*observer, path);
}

// The same for a lock set: its transaction is the first write of a new
// session (a set makes no directory ahead of it), and its reply is lost.
TEST_F(SafeTimeTest, ALockSetAdoptedAfterALostTransactionReplyHasABudgetFromItsGrant) {
    const std::vector<std::string> p{lock_path("a"), lock_path("b")};
    auto observer = connect();
    for (const auto& path : p) {
        create_parents(*observer, path);
        zt::create_node(*observer, path);
    }
    {
        zt::FaultyLink link(server_->port());
        auto o = options(4000ms);
        o.connect = link.connect_string();
        Session s(o);
        s.connect();
        link.drop_next_reply(p[0] + "/_c_");
        MultiMutex set(s, p);
        ASSERT_TRUE(set.try_lock_for(20s));
        EXPECT_EQ(link.replies_dropped(), 1u);
        EXPECT_GT(set.safe_for().value_or(0ms).count(), 0) << "held with nothing to base its budget on";
        EXPECT_EQ(list_contenders(*observer, p[0]).size(), 1u);
        auto released = set.async_unlock(boost::asio::use_future);
        EXPECT_FALSE(get_within(released));
    }
    for (const auto& path : p) zt::delete_node(*observer, path);
}

// `zklock run` as a user runs it: its lock node's create reaches the server,
// the replies to it and to the directory's create sent just ahead of it are
// lost, the client finds its node by the guid and holds it; the command runs
// to its end (it waits for `go`, written only once it runs) and zklock exits
// with its status.
TEST_F(SafeTimeTest, RunKeepsAHoldAdoptedAfterALostCreateReplyAndItsCommandRunsToTheEnd) {
    const auto path = lock_path();
    auto observer = connect();
    create_parents(*observer, path);  // without them the create fails, and there is nothing to adopt
    zt::create_node(*observer, path);
    zt::FaultyLink link(server_->port());
    link.drop_next_reply(path + "/_c_");
    cli::Cli cli;
    const auto pid_file = cli.file("pid");
    const auto go = cli.file("go");
    auto p = cli.start({"run", "-c", link.connect_string(), "--session-timeout", "4000", path, "--", "sh", "-c",
                        "echo $$ > \"$0\"; while [ ! -e \"$1\" ]; do sleep 0.05; done; echo finished",
                        pid_file.string(), go.string()});
    // The command writes its pid once it runs; a hold given up at once kills it
    // before that, and zklock exits.
    std::optional<std::string> line;
    ASSERT_TRUE(wait_until([&] { return (line = cli::first_line(pid_file)).has_value() || !p.running(); }, 30s));
    ASSERT_TRUE(line.has_value()) << "zklock ended before its command ran: " << cli.output();
    const pid_t command = std::stoi(*line);
    EXPECT_EQ(link.replies_dropped(), 1u) << cli.output();
    std::ofstream(go.string()) << "go\n";
    EXPECT_EQ(cli::exit_code(p), 0) << cli.output();
    EXPECT_NE(cli.output().find("finished"), std::string::npos) << cli.output();
    EXPECT_EQ(cli.output().find("no longer certainly held"), std::string::npos) << cli.output();
    EXPECT_TRUE(cli::process_gone(command));
    zt::delete_node(*observer, path);
}

// `zklock run` paused past its session timeout (the server expires the
// session), its command ending meanwhile, and cut off from the server when it
// resumes: the command's end and the budget's timer are both due at once, and
// whichever zklock sees first, the command did not end certainly holding the
// lock. It exits 76, never with the command's status because a release that
// nobody confirms ran out of time ("deadline passed").
TEST_F(SafeTimeTest, RunWhoseCommandEndedAfterItsBudgetRanOutExits76EvenWhenTheReleaseIsNotConfirmed) {
    ZKLOCK_REQUIRE_IPTABLES();
    const auto path = lock_path();
    auto observer = connect();
    zt::FaultyLink link(server_->port());
    cli::Cli cli;
    const auto pid_file = cli.file("pid");
    const auto go = cli.file("go");
    auto p = cli.start({"run", "-c", link.connect_string(), "--session-timeout", "1000", path, "--", "sh", "-c",
                        "echo $$ > \"$0\"; while [ ! -e \"$1\" ]; do sleep 0.05; done", pid_file.string(),
                        go.string()});
    const pid_t command = std::stoi(cli::wait_for_line(pid_file));
    ASSERT_EQ(::kill(p.pid(), SIGSTOP), 0);
    EXPECT_TRUE(wait_until([&] { return list_contenders(*observer, path).empty(); }, 20s))
        << "the server never expired the paused zklock's session";
    link.blackhole();
    std::ofstream(go.string()) << "go\n";
    EXPECT_TRUE(wait_until([&] { return cli::process_gone(command); }, 10s));
    ASSERT_EQ(::kill(p.pid(), SIGCONT), 0);
    EXPECT_EQ(cli::exit_code(p), 76) << cli.output();
    const auto out = cli.output();
    EXPECT_TRUE(out.find("lock no longer certainly held") != std::string::npos ||
                out.find("lock lost") != std::string::npos)
        << out;
    EXPECT_EQ(out.find("deadline passed"), std::string::npos) << out;
    link.heal();
}
