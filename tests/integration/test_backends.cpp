// zklock::open_lock_service: every backend opened by name against the real
// servers it needs, the options it refuses, and Lock::stats() of a waiter.
#include "descriptors.hpp"
#include "proof_support.hpp"
#include "silent_listener.hpp"
#include "support.hpp"

#include <zklock/backends.hpp>
#include <zklock/testing/backend_servers.hpp>
#include <zklock/testing/etcd_server.hpp>
#include <zklock/testing/mariadb_server.hpp>

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>

namespace zklock::test {
namespace {

/// One MariaDB server for every mysql-* test of this process (ctest runs them
/// as one group): a start costs seconds, and their lock names differ.
testing::MariaDBServer& shared_mariadb() {
    static const auto server = std::make_unique<testing::MariaDBServer>();
    return *server;
}

/// The servers one backend needs (testing::BackendServers), started for one
/// test, and the options that reach them.
class BackendSetup {
public:
    explicit BackendSetup(const std::string& backend) : servers_(server_options()) {
        options_.ttl = 2s;
        options_.connect_timeout = 10s;
        if (!backend.starts_with("mysql")) servers_.start_for(backend);
        if (backend == "zookeeper") {
            options_.zookeeper = servers_.zookeeper().connect_string();
            options_.zookeeper_session_timeout = 4s;
        } else if (backend == "redis") {
            options_.redis = servers_.redis().connect_string();
            redis_.push_back(&servers_.redis());
        } else if (backend == "redlock") {
            options_.redlock = servers_.redlock_connect_strings();
            for (const auto& m : servers_.redlock()) redis_.push_back(m.get());
        } else if (backend.starts_with("postgres")) {
            options_.postgres = servers_.postgres().connect_string();
        } else if (backend.starts_with("mysql")) {
            options_.mysql = shared_mariadb().connect_string();
        } else if (backend == "flock") {
            options_.flock_directory = servers_.flock_directory().string();
        } else if (backend == "memcached") {
            options_.memcached = servers_.memcached().connect_string();
        } else if (backend == "etcd") {
            options_.etcd = servers_.etcd().connect_string();
        }
    }

    const BackendOptions& options() const { return options_; }
    testing::ZooKeeperServer* zookeeper() { return &servers_.zookeeper(); }
    /// The backend's Redis servers: one for redis, the masters for redlock.
    const std::vector<testing::RedisServer*>& redis() const { return redis_; }
    testing::PostgresServer* postgres() { return &servers_.postgres(); }
    testing::MariaDBServer* mariadb() { return &shared_mariadb(); }
    testing::EtcdServer* etcd() { return &servers_.etcd(); }

private:
    static testing::BackendServersOptions server_options() {
        testing::BackendServersOptions o;
        o.zookeeper.tick_time_ms = 100;
        o.zookeeper.max_session_timeout_ms = 4000;
        // wchp shows which sessions watch which node (the counters test needs it);
        // a later line of zoo.cfg overrides the fixture's whitelist.
        o.zookeeper.extra_config = {"4lw.commands.whitelist=*"};
        o.flock_prefix = "zklock-backends-flock-";
        return o;
    }

    testing::BackendServers servers_;
    BackendOptions options_;
    std::vector<testing::RedisServer*> redis_;
};

std::vector<std::string> backend_names() {
    std::vector<std::string> out;
    for (const auto n : lock_backend_names()) out.emplace_back(n);
    return out;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
    std::string n = info.param;
    std::replace(n.begin(), n.end(), '-', '_');
    return n;
}

/// Runs `open` on its own thread and waits for it with a deadline, so that a
/// connect that hangs fails the test instead of blocking it. On a timeout the
/// thread is left to finish on its own (the test has failed by then).
std::future<std::error_code> open_in_background(std::string backend, BackendOptions options) {
    auto done = std::make_shared<std::promise<std::error_code>>();
    auto result = done->get_future();
    std::thread([done, backend = std::move(backend), options = std::move(options)] {
        try {
            open_lock_service(backend, options);
            done->set_value({});
        } catch (const zklock::error& e) {
            done->set_value(e.code());
        } catch (...) {
            done->set_exception(std::current_exception());
        }
    }).detach();
    return result;
}

/// What open_lock_service throws for `options`, or std::nullopt when it opens.
std::optional<zklock::error> refusal(const std::string& backend, const BackendOptions& options) {
    try {
        open_lock_service(backend, options);
    } catch (const zklock::error& e) {
        return e;
    }
    return std::nullopt;
}

// --- the factory -------------------------------------------------------------------

class Factory : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        if (!lock_backend_available(GetParam())) GTEST_SKIP() << GetParam() << " is not built into this zklock";
        servers_ = &shared_setup(GetParam());
    }

    /// One BackendSetup per backend for the whole process, stopped at its exit:
    /// the tests of one backend run in one ctest process (tests/CMakeLists.txt)
    /// and share its servers instead of starting them for each test.
    static BackendSetup& shared_setup(const std::string& backend) {
        static std::map<std::string, std::unique_ptr<BackendSetup>> setups;
        auto& setup = setups[backend];
        if (!setup) setup = std::make_unique<BackendSetup>(backend);
        return *setup;
    }

    /// Returns once the server shows `waiter` waiting behind the holder, by what the
    /// backend leaves on the server; false when it does not within the deadline.
    /// `how` says what was checked. Backends whose waiters leave no trace on the
    /// server (polling) are known to wait once they have asked twice while the lock
    /// was held: the first answer was "taken".
    bool wait_until_waiting(Lock& waiter, const std::string& lock_name, std::string& how) {
        const auto& backend = GetParam();
        if (backend == "zookeeper") {
            how = "the waiter's session watches the holder's node (wchp)";
            Session observer([&] {
                SessionOptions o;
                o.connect = servers_->zookeeper()->connect_string();
                o.session_timeout = 2s;
                return o;
            }());
            observer.connect();
            const std::string dir = servers_->options().zookeeper_root + "/" + lock_name;
            std::vector<contender> queue;
            if (!wait_until([&] {
                    std::error_code ec;
                    queue = list_contenders(observer, dir, ec);
                    return !ec && queue.size() == 2;
                }))
                return false;
            const auto holder_node = dir + "/" + queue[0].node;
            return wait_until([&] {
                return watches(servers_->zookeeper()->four_letter_word("wchp", 5s), holder_node,
                               queue[1].owner_session);
            });
        }
        if (backend == "redis" || backend == "redlock") {
            how = "a release channel of the lock has a subscriber on every server (PUBSUB CHANNELS)";
            return wait_until([&] {
                for (const auto& s : servers_->redis())
                    if (s->command({"PUBSUB", "CHANNELS", std::string("*") + lock_name + "*"}) == "*0\r\n") return false;
                return true;
            });
        }
        if (backend == "postgres-advisory" || backend == "postgres-row") {
            how = "the waiter's connection waits on a lock in pg_stat_activity";
            const std::string method = backend.substr(std::string("postgres-").size());
            return wait_until([&] {
                return servers_->postgres()->psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                                                  "'zklock-" + method + ":" + lock_name +
                                                  "' AND wait_event_type = 'Lock'") == "1\n";
            });
        }
        if (backend == "mysql-advisory" || backend == "mysql-row") {
            how = "the waiter's statement runs in the server's PROCESSLIST";
            const std::string pattern = backend == "mysql-advisory"
                                            ? "%GET_LOCK(''zklock:" + lock_name + "''%"
                                            : "%zklock_rows WHERE name = ''" + lock_name + "'' FOR UPDATE%";
            return wait_until([&] {
                return servers_->mariadb()->query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE "
                                                  "ID <> CONNECTION_ID() AND INFO LIKE '" + pattern + "'") == "1\n";
            });
        }
        if (backend == "etcd") {
            // The waiter's key alone is not enough: its read of the key ahead may
            // still come after a release, and find it gone. Once it watches, the
            // release is a watch event.
            how = "the lock's prefix holds the holder's key and the waiter's (queued by create revision), and the "
                  "server has a watcher (etcd_debugging_mvcc_watcher_total)";
            return wait_until([&] {
                return servers_->etcd()->keys("zklock/" + lock_name + "/").size() == 2 && etcd_watchers() >= 1;
            });
        }
        how = "the waiter asked twice while the lock was held";
        return wait_until([&] { return waiter.stats().attempts >= 2; });
    }

    // The watchers etcd has now, from its metrics (the only other watches are
    // those of this test's waiters: the suite's services end with each test).
    int etcd_watchers() {
        std::istringstream in(testing::etcd_request(servers_->etcd()->plain_port(), "/metrics", "", 5s));
        const std::string name = "etcd_debugging_mvcc_watcher_total ";
        for (std::string line; std::getline(in, line);)
            if (line.rfind(name, 0) == 0) return std::stoi(line.substr(name.size()));
        ADD_FAILURE() << "etcd's metrics have no " << name;
        return 0;
    }

    BackendSetup* servers_ = nullptr;
};

TEST_P(Factory, OpensAServiceWhoseLocksExcludeEachOther) {
    auto first = open_lock_service(GetParam(), servers_->options());
    ASSERT_TRUE(first);
    EXPECT_EQ(first->capabilities().backend, GetParam());

    Lock lock = first->make_lock("factory-test");
    EXPECT_EQ(lock.capabilities().backend, GetParam());
    lock.lock();
    EXPECT_TRUE(lock.is_held());
    if (lock.capabilities().fencing_tokens) {
        EXPECT_GT(lock.fencing_token(), 0);
    } else {
        EXPECT_EQ(lock.fencing_token(), 0);
    }

    // A second service on the same servers sees the same lock.
    auto second = open_lock_service(GetParam(), servers_->options());
    Lock other = second->make_lock("factory-test");
    EXPECT_FALSE(other.try_lock()) << "a second client took a held lock";

    auto released = lock.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
    EXPECT_FALSE(lock.is_held());

    EXPECT_TRUE(other.try_lock()) << "the confirmed release did not free the lock";
    EXPECT_TRUE(other.is_held());
    if (other.capabilities().fencing_tokens) {
        EXPECT_GT(other.fencing_token(), 0);
    }
    auto released_again = other.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released_again));
}

INSTANTIATE_TEST_SUITE_P(Backends, Factory, ::testing::ValuesIn(backend_names()), test_name);

TEST(FactoryErrors, UnknownNameIsRefusedWithTheKnownNames) {
    const auto refused = refusal("nosuch", {});
    ASSERT_TRUE(refused) << "opened a backend named 'nosuch'";
    EXPECT_EQ(refused->code(), errc::invalid_argument);
    const std::string what = refused->what();
    EXPECT_NE(what.find("nosuch"), std::string::npos) << what;
    for (const auto name : lock_backend_names())
        EXPECT_NE(what.find(std::string(name)), std::string::npos) << "'" << name << "' missing from: " << what;
}

TEST(FactoryErrors, UnbuiltBackendIsRefused) {
    bool any = false;
    for (const auto name : lock_backend_names()) {
        if (lock_backend_available(name)) continue;
        any = true;
        const auto refused = refusal(std::string(name), {});
        ASSERT_TRUE(refused) << "opened " << name << ", which is not built";
        EXPECT_EQ(refused->code(), errc::invalid_argument) << name;
        EXPECT_NE(std::string(refused->what()).find("not built"), std::string::npos) << refused->what();
    }
    if (!any) GTEST_SKIP() << "every backend is built into this zklock";
}

TEST(FactoryErrors, FlockWithoutItsDirectoryIsRefused) {
    testing::TempDir dir("zklock-backends-");
    BackendOptions o;
    o.flock_directory = (dir.path() / "does-not-exist").string();
    const auto refused = refusal("flock", o);
    ASSERT_TRUE(refused) << "opened flock on a missing directory";
    EXPECT_EQ(refused->code(), errc::invalid_argument);
    EXPECT_NE(std::string(refused->what()).find(o.flock_directory), std::string::npos) << refused->what();
}

TEST(FactoryErrors, RedlockWithoutMastersIsRefused) {
    if (!lock_backend_available("redlock")) GTEST_SKIP() << "redlock is not built into this zklock";
    BackendOptions o;
    o.redlock.clear();
    const auto refused = refusal("redlock", o);
    ASSERT_TRUE(refused) << "opened redlock without masters";
    EXPECT_EQ(refused->code(), errc::invalid_argument);
}

TEST(FactoryErrors, ZooKeeperWithNothingListeningIsRefusedWithoutHanging) {
    BackendOptions o;
    o.zookeeper = "127.0.0.1:" + std::to_string(testing::free_loopback_port());  // nothing listens there
    o.connect_timeout = 1s;
    auto opened = open_in_background("zookeeper", o);
    // The deadline only keeps a hang from blocking the run; it says nothing about speed.
    ASSERT_EQ(opened.wait_for(30s), std::future_status::ready) << "open_lock_service hung on a dead server";
    EXPECT_EQ(opened.get(), errc::connection_refused);
}

TEST(FactoryErrors, ZooKeeperThatNeverAnswersTimesOutWithoutHanging) {
    SilentListener silent;
    BackendOptions o;
    o.zookeeper = silent.address();
    o.connect_timeout = 1s;
    auto opened = open_in_background("zookeeper", o);
    ASSERT_EQ(opened.wait_for(30s), std::future_status::ready) << "open_lock_service hung on a silent server";
    EXPECT_EQ(opened.get(), errc::timeout);
}

// --- counters ----------------------------------------------------------------------

class Counters : public Factory {
protected:
    static constexpr const char* lock_name = "counters-test";

};

TEST_P(Counters, AWaiterGrantedAfterTheReleaseCountsOneGrantAndItsWait) {
    auto holder_service = open_lock_service(GetParam(), servers_->options());
    auto waiter_service = open_lock_service(GetParam(), servers_->options());
    Lock holder = holder_service->make_lock(lock_name);
    Lock waiter = waiter_service->make_lock(lock_name);
    holder.lock();

    // The grant as the waiter records it, after the release the test notes
    // before it makes it: one noted earlier came while the lock was held.
    GrantLog log;
    log.holds("holder");
    auto grant = log.lock(waiter, "waiter");
    std::string how;
    ASSERT_TRUE(wait_until_waiting(waiter, lock_name, how)) << "never seen waiting: " << how;
    EXPECT_EQ(grant.wait_for(0s), std::future_status::timeout) << "granted while the lock was held";
    EXPECT_FALSE(waiter.is_held());

    log.releasing("holder");
    auto released = holder.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
    EXPECT_FALSE(get_within(grant));
    EXPECT_TRUE(waiter.is_held());
    EXPECT_EQ(log.entries(), (std::vector<std::string>{"-holder", "+waiter"})) << "granted while the lock was held";
    auto released_again = waiter.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released_again));

    // Every operation has completed: the counters are final.
    const auto h = holder.stats();
    const auto w = waiter.stats();
    SCOPED_TRACE("waiting seen by: " + how);
    SCOPED_TRACE("waiter: acquisitions " + std::to_string(w.acquisitions) + ", attempts " + std::to_string(w.attempts) +
                 ", wakeups " + std::to_string(w.wakeups) + ", timer_retries " + std::to_string(w.timer_retries));
    EXPECT_EQ(h.acquisitions, 1u);
    EXPECT_GE(h.attempts, 1u);
    EXPECT_EQ(w.acquisitions, 1u);
    EXPECT_GE(w.attempts, 1u);
    const auto& backend = GetParam();
    if (backend == "zookeeper") {
        // One watch event (the holder's node deleted); that node was the only one
        // ahead, so its deletion grants without listing the queue again.
        EXPECT_EQ(w.wakeups, 1u);
        EXPECT_EQ(w.attempts, 1u);
        EXPECT_EQ(w.timer_retries, 0u);
    } else if (backend == "etcd") {
        // One Txn queued its key; one watch event (the holder's key deleted), then
        // one read that finds no key before ours.
        EXPECT_EQ(w.wakeups, 1u);
        EXPECT_EQ(w.attempts, 1u);
        EXPECT_EQ(w.timer_retries, 0u);
    } else if (backend == "postgres-advisory" || backend == "postgres-row" || backend == "mysql-advisory" ||
               backend == "mysql-row") {
        // One lock statement that the server answered when it handed the lock over.
        EXPECT_EQ(w.attempts, 1u);
        EXPECT_EQ(w.wakeups, 0u);
        EXPECT_EQ(w.timer_retries, 0u);
    } else if (backend == "redis" || backend == "redlock") {
        // Its first request found the lock taken. The retry may come from the
        // subscription being confirmed (not a wake-up) or from the release message;
        // that one release counts once, however many masters published it.
        EXPECT_GE(w.attempts, 2u);
        EXPECT_LE(w.wakeups, 1u);
    } else {
        // Its first request found the lock taken: every later one was started by a
        // wake-up or by its backoff timer.
        EXPECT_GE(w.attempts, 2u);
        EXPECT_GE(w.wakeups + w.timer_retries, 1u);
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, Counters, ::testing::ValuesIn(backend_names()), test_name);

// --- descriptors ---------------------------------------------------------------------

class CloseOnExec : public Factory {};

// A program the process starts (zklock run's command, a library user's fork and
// exec) must get none of the backend's connections or lock files: a child that
// wrote to one could corrupt the protocol, and it keeps a lock or a session
// alive after the parent is gone.
TEST_P(CloseOnExec, EveryDescriptorAServiceOpensIsCloseOnExec) {
    const auto before = open_descriptors();
    auto holder_service = open_lock_service(GetParam(), servers_->options());
    auto waiter_service = open_lock_service(GetParam(), servers_->options());
    Lock holder = holder_service->make_lock("cloexec");
    Lock waiter = waiter_service->make_lock("cloexec");
    holder.lock();
    auto granted = waiter.async_lock(boost::asio::use_future);
    std::string how;
    ASSERT_TRUE(wait_until_waiting(waiter, "cloexec", how)) << "never seen waiting: " << how;
    EXPECT_GT(open_descriptors().size(), before.size()) << "the services opened nothing?";
    // Held, waited for (Redis: the subscriber connection too), each connection open.
    auto inheritable = inheritable_since(before);
    EXPECT_TRUE(inheritable.empty()) << "inheritable: " << ::testing::PrintToString(inheritable);

    if (GetParam() == "redis" || GetParam() == "redlock") {
        // The servers drop the subscribers: the reconnected ones are close-on-exec too.
        for (const auto& s : servers_->redis()) s->command({"CLIENT", "KILL", "TYPE", "pubsub"});
        ASSERT_TRUE(wait_until_waiting(waiter, "cloexec", how)) << "never subscribed again: " << how;
        inheritable = inheritable_since(before);
        EXPECT_TRUE(inheritable.empty()) << "inheritable after reconnecting: " << ::testing::PrintToString(inheritable);
    }

    auto released = holder.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
    EXPECT_FALSE(get_within(granted, 30s));
    auto released_again = waiter.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released_again));
}

INSTANTIATE_TEST_SUITE_P(Backends, CloseOnExec, ::testing::ValuesIn(backend_names()), test_name);

// A password the server refuses is an authentication error, said at once, for
// every PostgreSQL backend (not a "connection lost" to retry).
TEST(PostgresAuth, AMissingOrWrongPasswordIsAnAuthErrorNotALostConnection) {
    zklock::testing::PostgresServerOptions o;
    o.password = "pg-right-secret";
    zklock::testing::PostgresServer server(o);
    for (const char* backend : {"postgres-advisory", "postgres-lease", "postgres-row"}) {
        for (const auto& [suffix, expected] :
             std::vector<std::pair<std::string, errc>>{{" password=pg-wrong-guess", errc::auth_failed},
                                                       {"", errc::no_auth}}) {
            BackendOptions options;
            options.postgres = server.connect_string() + suffix;
            options.connect_timeout = 10s;
            auto service = open_lock_service(backend, options);
            Lock lock = service->make_lock("auth");
            std::error_code ec;
            lock.lock(ec);
            EXPECT_EQ(ec, expected) << backend << " with '" << suffix << "': " << ec.message();
        }
        BackendOptions right;
        right.postgres = server.connect_string() + " password=pg-right-secret";
        auto service = open_lock_service(backend, right);
        Lock lock = service->make_lock("auth");
        lock.lock();
        lock.unlock();
    }
}

} // namespace
} // namespace zklock::test
