// Redis and Redlock backends: what the conformance suite cannot show.
#include "support.hpp"

#include <zklock/redis/redis_lock_service.hpp>
#include <zklock/testing/redis_server.hpp>

#include <boost/asio/use_future.hpp>

namespace zklock::test {
namespace {

RedisOptions short_ttl() {
    RedisOptions o;
    o.ttl = 2s;
    o.command_timeout = 500ms;
    o.connect_timeout = 500ms;
    return o;
}

std::vector<std::string> addresses(const std::vector<std::unique_ptr<testing::RedisServer>>& servers) {
    std::vector<std::string> out;
    for (const auto& s : servers) out.push_back(s->connect_string());
    return out;
}

TEST(RedisLock, RestartWithoutPersistenceIsReportedAsLoss) {
    testing::RedisServer server;  // no persistence: a restart forgets the key
    RedisLockService service(server.connect_string(), short_ttl());
    Lock lock = service.make_lock("restart");
    lock.lock();
    EXPECT_GT(lock.fencing_token(), 0);
    std::promise<std::error_code> reported;
    lock.on_lost([&](std::error_code ec) { reported.set_value(ec); });
    auto lost = lock.async_wait_lost(boost::asio::use_future);
    server.restart();
    const auto ec = get_within(lost, 10s);
    EXPECT_TRUE(is_lock_lost(ec)) << ec.message();
    auto via_callback = reported.get_future();
    EXPECT_TRUE(is_lock_lost(get_within(via_callback, 10s)));
    EXPECT_FALSE(lock.is_held());
    EXPECT_EQ(server.command({"EXISTS", RedisLockService::key_for("zklock:", "restart")}), ":0\r\n");
    // The server works again: the lock can be taken anew.
    EXPECT_TRUE(lock.try_lock_for(5s));
    lock.unlock();
}

TEST(RedisLock, ServerDownFailsInsteadOfHanging) {
    auto server = std::make_unique<testing::RedisServer>();
    RedisLockService service(server->connect_string(), short_ttl());
    server->kill9();
    Lock lock = service.make_lock("down");
    std::error_code ec;
    EXPECT_FALSE(lock.try_lock(ec));
    EXPECT_TRUE(ec) << "no error from a server that is down";
    ec = {};
    lock.lock(ec);
    EXPECT_TRUE(ec);
    EXPECT_FALSE(lock.is_held());
}

TEST(RedisLock, AnotherClientsKeyIsNeverDeleted) {
    testing::RedisServer server;
    RedisLockService service(server.connect_string(), short_ttl());
    Lock lock = service.make_lock("foreign");
    lock.lock();
    // Behind our back the key now holds another client's token.
    const auto key = RedisLockService::key_for("zklock:", "foreign");
    server.command({"SET", key, "someone-else", "PX", "60000"});
    auto released = lock.async_unlock(boost::asio::use_future);
    EXPECT_EQ(get_within(released), errc::node_deleted);
    EXPECT_EQ(server.command({"GET", key}), "$12\r\nsomeone-else\r\n");
    server.command({"DEL", key});
}

TEST(RedisLock, ALockThatOutlivesItsServiceFailsAtOnce) {
    testing::RedisServer server;
    auto service = std::make_unique<RedisLockService>(server.connect_string(), short_ttl());
    Lock lock = service->make_lock("outlives");
    lock.lock();
    auto lost = lock.async_wait_lost(boost::asio::use_future);
    service.reset();  // releases on the way out (graceful close)
    EXPECT_EQ(get_within(lost), errc::session_closed);
    EXPECT_FALSE(lock.is_held());
    EXPECT_EQ(server.command({"EXISTS", RedisLockService::key_for("zklock:", "outlives")}), ":0\r\n");
    std::error_code ec;
    EXPECT_FALSE(lock.try_lock_for(1s, ec));
    EXPECT_EQ(ec, errc::session_closed);
    lock.unlock();
}

TEST(Redlock, WorksWithOneOfFiveDownAndRefusesWithThreeDown) {
    std::vector<std::unique_ptr<testing::RedisServer>> servers;
    for (int i = 0; i < 5; ++i) servers.push_back(std::make_unique<testing::RedisServer>());
    RedlockService a(addresses(servers), short_ttl());
    RedlockService b(addresses(servers), short_ttl());
    {
        Lock la = a.make_lock("quorum");
        Lock lb = b.make_lock("quorum");
        servers[0]->kill9();
        ASSERT_TRUE(la.try_lock_for(5s));
        EXPECT_FALSE(lb.try_lock_for(300ms)) << "two holders with four masters up";
        const auto first = la.fencing_token();
        // Held across several watchdog renewals with one master down.
        EXPECT_FALSE(wait_until([&] { return !la.is_held(); }, 2500ms));
        la.unlock();
        ASSERT_TRUE(lb.try_lock_for(5s));
        EXPECT_GT(lb.fencing_token(), first);
        lb.unlock();
    }
    servers[1]->kill9();
    servers[2]->kill9();
    {
        Lock la = a.make_lock("quorum");
        std::error_code ec;
        EXPECT_FALSE(la.try_lock_for(500ms, ec));
        EXPECT_FALSE(la.is_held());
        ec = {};
        EXPECT_FALSE(la.try_lock(ec));
        EXPECT_TRUE(ec) << "a minority of masters is no lock";
    }
    for (int i = 3; i < 5; ++i)
        EXPECT_EQ(servers[static_cast<std::size_t>(i)]->command({"EXISTS", RedisLockService::key_for("zklock:", "quorum")}),
                  ":0\r\n")
            << "partial acquisition left behind on master " << i;
}

TEST(Redlock, LossOfTheMajorityIsReported) {
    std::vector<std::unique_ptr<testing::RedisServer>> servers;
    for (int i = 0; i < 5; ++i) servers.push_back(std::make_unique<testing::RedisServer>());
    RedlockService service(addresses(servers), short_ttl());
    Lock lock = service.make_lock("majority");
    lock.lock();
    auto lost = lock.async_wait_lost(boost::asio::use_future);
    for (int i = 0; i < 3; ++i) servers[static_cast<std::size_t>(i)]->kill9();
    EXPECT_EQ(get_within(lost, 10s), errc::session_expired);
    EXPECT_FALSE(lock.is_held());
}

// --- authentication --------------------------------------------------------------

constexpr const char* requirepass = "req-Secret:7@x";  // ':' and '@' need percent-encoding in a URL
constexpr const char* requirepass_in_url = "req-Secret%3A7%40x";

std::unique_ptr<testing::RedisServer> protected_server(const std::string& password, std::vector<testing::RedisUser> users = {}) {
    testing::RedisServerOptions o;
    o.password = password;
    o.users = std::move(users);
    return std::make_unique<testing::RedisServer>(o);
}

std::string url(const testing::RedisServer& s, const std::string& userinfo, const std::string& db = "") {
    return "redis://" + userinfo + "@" + s.connect_string() + db;
}

/// Takes and releases a lock of `service`; the key is on the servers while held.
void acquire_and_release(LockService& service, const std::vector<testing::RedisServer*>& servers, const std::string& name) {
    Lock lock = service.make_lock(name);
    lock.lock();
    EXPECT_TRUE(lock.is_held());
    EXPECT_GT(lock.fencing_token(), 0);
    for (auto* s : servers) EXPECT_EQ(s->command({"EXISTS", RedisLockService::key_for("zklock:", name)}), ":1\r\n");
    auto released = lock.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
    for (auto* s : servers) EXPECT_EQ(s->command({"EXISTS", RedisLockService::key_for("zklock:", name)}), ":0\r\n");
}

/// The error of an acquire, and that neither its message nor the lock left a trace of `secrets`.
std::error_code refused_acquire(LockService& service, const std::vector<std::string>& secrets) {
    Lock lock = service.make_lock("refused");
    std::error_code ec;
    EXPECT_FALSE(lock.try_lock_for(10s, ec));  // refused credentials do not wait for the deadline
    EXPECT_FALSE(lock.is_held());
    try {
        lock.lock();
        ADD_FAILURE() << "lock() succeeded with refused credentials";
        lock.unlock();
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), ec);
        const std::string what = e.what();
        EXPECT_EQ(what.find("Protocol error"), std::string::npos) << what;
        for (const auto& secret : secrets) EXPECT_EQ(what.find(secret), std::string::npos) << what;
    }
    for (const auto& secret : secrets) EXPECT_EQ(ec.message().find(secret), std::string::npos) << ec.message();
    return ec;
}

TEST(RedisAuth, RequirepassBothBackendsAcquireAndRelease) {
    auto server = protected_server(requirepass);
    {
        RedisLockService in_url(url(*server, std::string(":") + requirepass_in_url), short_ttl());
        acquire_and_release(in_url, {server.get()}, "in-url");
    }
    {
        auto o = short_ttl();
        o.password = requirepass;
        RedisLockService in_options(server->connect_string(), o);
        acquire_and_release(in_options, {server.get()}, "in-options");
    }
    std::vector<std::unique_ptr<testing::RedisServer>> masters;
    std::vector<std::string> urls;
    std::vector<testing::RedisServer*> raw;
    for (int i = 0; i < 3; ++i) {
        masters.push_back(protected_server(requirepass));
        urls.push_back(url(*masters.back(), std::string(":") + requirepass_in_url));
        raw.push_back(masters.back().get());
    }
    RedlockService redlock(urls, short_ttl());
    acquire_and_release(redlock, raw, "redlock");
}

TEST(RedisAuth, AclUserBothBackendsAcquireAndRelease) {
    // The default user is off: only alice gets in.
    const std::vector<testing::RedisUser> users = {{"alice", "alice-Secret-9"}};
    auto server = protected_server("", users);
    {
        RedisLockService service(url(*server, "alice:alice-Secret-9", "/2"), short_ttl());
        Lock lock = service.make_lock("acl");
        lock.lock();
        // SELECT 2 came first: the key is in db 2.
        EXPECT_NE(server->command({"INFO", "keyspace"}).find("db2:keys=2"), std::string::npos)
            << server->command({"INFO", "keyspace"});
        lock.unlock();
    }
    {
        auto o = short_ttl();
        o.user = "alice";
        o.password = "alice-Secret-9";
        RedisLockService in_options(server->connect_string(), o);
        acquire_and_release(in_options, {server.get()}, "acl-in-options");
    }
    std::vector<std::unique_ptr<testing::RedisServer>> masters;
    std::vector<std::string> plain;
    std::vector<testing::RedisServer*> raw;
    for (int i = 0; i < 3; ++i) {
        masters.push_back(protected_server("", users));
        plain.push_back(masters.back()->connect_string());
        raw.push_back(masters.back().get());
    }
    auto o = short_ttl();
    o.user = "alice";
    o.password = "alice-Secret-9";
    RedlockService redlock(plain, o);
    acquire_and_release(redlock, raw, "redlock-acl");
}

TEST(RedisAuth, WaitersSubscribeAndReconnectAuthenticated) {
    auto server = protected_server(requirepass);
    auto o = short_ttl();
    o.password = requirepass;
    RedisLockService a(server->connect_string(), o), b(server->connect_string(), o);
    Lock holder = a.make_lock("wake");
    Lock waiter = b.make_lock("wake");
    const auto subscribed = [&] {
        return server->command({"PUBSUB", "NUMSUB", RedisLockService::key_for("zklock:", "wake") + ":released"})
                   .ends_with(":1\r\n");
    };
    holder.lock();
    auto granted = waiter.async_lock(boost::asio::use_future);
    // The waiter's pub/sub connection authenticated: its SUBSCRIBE went through.
    ASSERT_TRUE(wait_until(subscribed)) << "the waiter never subscribed";
    // The server drops the subscriber: its reconnect authenticates again.
    EXPECT_EQ(server->command({"CLIENT", "KILL", "TYPE", "pubsub"}).rfind(":", 0), 0U);
    ASSERT_TRUE(wait_until(subscribed)) << "the waiter did not subscribe again";
    auto released = holder.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
    EXPECT_FALSE(get_within(granted));
    EXPECT_TRUE(waiter.is_held());
    auto released_again = waiter.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released_again));
    // The server drops the command connections: the next acquire reconnects,
    // authenticated (a command on the dropped connection may fail first; the
    // deadline lets it retry).
    EXPECT_EQ(server->command({"CLIENT", "KILL", "TYPE", "normal"}).rfind(":", 0), 0U);
    std::error_code ec;
    EXPECT_TRUE(holder.try_lock_for(10s, ec)) << ec.message();
    auto released_last = holder.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released_last));
}

TEST(RedisAuth, RefusedCredentialsAreClearErrorsThatNameNoSecret) {
    auto server = protected_server(requirepass, {{"alice", "alice-Secret-9"}});
    const std::vector<std::string> secrets = {"wrong-Secret-1", "alice-Secret-9", "req-Secret"};
    {
        RedisLockService wrong(url(*server, ":wrong-Secret-1"), short_ttl());
        EXPECT_EQ(refused_acquire(wrong, secrets), errc::auth_failed);
    }
    {
        RedisLockService unknown_user(url(*server, "mallory:wrong-Secret-1"), short_ttl());
        EXPECT_EQ(refused_acquire(unknown_user, secrets), errc::auth_failed);
    }
    {
        RedisLockService no_password(server->connect_string(), short_ttl());
        EXPECT_EQ(refused_acquire(no_password, secrets), errc::no_auth);
    }
    {
        std::vector<std::string> urls(3, url(*server, ":wrong-Secret-1"));
        RedlockService redlock(urls, short_ttl());
        EXPECT_EQ(refused_acquire(redlock, secrets), errc::auth_failed);
    }
    {
        RedisLockService bad_db(url(*server, std::string(":") + requirepass_in_url, "/999"), short_ttl());
        EXPECT_EQ(refused_acquire(bad_db, secrets), errc::invalid_argument);
    }
    // A malformed address is refused at once, without quoting its credentials.
    try {
        RedisLockService bad("redis://alice:wrong-Secret-1@" + server->host() + ":0", short_ttl());
        ADD_FAILURE() << "a port 0 was accepted";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        EXPECT_EQ(std::string(e.what()).find("wrong-Secret-1"), std::string::npos) << e.what();
    }
    // Nothing was set by any refused acquire.
    EXPECT_EQ(server->command({"DBSIZE"}), ":0\r\n");
}

} // namespace
} // namespace zklock::test
