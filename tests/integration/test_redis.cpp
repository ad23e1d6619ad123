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

} // namespace
} // namespace zklock::test
