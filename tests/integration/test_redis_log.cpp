// The Redis and Redlock services' logs (RedisOptions::log): connections made
// and lost, a refused AUTH, a renewal that reaches no majority and a lost lock
// reach the sink, with the backend's name as source and no credentials.
#include "log_support.hpp"
#include "support.hpp"

#include <zklock/redis/redis_lock_service.hpp>
#include <zklock/testing/redis_server.hpp>

#include <boost/asio/use_future.hpp>

namespace zklock::test {
namespace {

constexpr const char* redis_password = "log-Secret-3";

RedisOptions logged(collected_log& log, log_level level = log_level::info) {
    RedisOptions o;
    o.ttl = 2s;
    o.command_timeout = 500ms;
    o.connect_timeout = 500ms;
    o.log = log.sink(level);
    return o;
}

std::unique_ptr<testing::RedisServer> protected_server() {
    testing::RedisServerOptions o;
    o.password = redis_password;
    return std::make_unique<testing::RedisServer>(o);
}

TEST(RedisLog, ConnectionsAndALostLockAreLoggedWithoutTheirCredentials) {
    auto server = protected_server();  // no persistence: a restart forgets the key
    collected_log log;
    auto options = logged(log);
    options.password = redis_password;
    RedisLockService service(server->connect_string(), options);
    Lock lock = service.make_lock("logged");
    lock.lock();
    const auto where = server->connect_string();
    EXPECT_TRUE(log.has_at(log_level::info, "redis", "connected to " + where + " (commands)"));
    auto lost = lock.async_wait_lost(boost::asio::use_future);
    server->restart();
    EXPECT_TRUE(is_lock_lost(get_within(lost, 10s)));
    EXPECT_TRUE(wait_until([&] { return log.has_at(log_level::error, "redis", "lock zklock:{logged} lost: "); }))
        << "the loss was not logged";
    EXPECT_TRUE(wait_until([&] { return log.has_at(log_level::warn, "redis", "connection to " + where + " (commands) lost"); }))
        << "the dropped connection was not logged";
    for (const auto& r : log.all()) {
        EXPECT_EQ(r.source, "redis");
        EXPECT_LE(r.level, log_level::info) << r.message;
    }
    EXPECT_FALSE(log.mentions(redis_password)) << "a record holds the password";
}

TEST(RedisLog, ARefusedPasswordIsAnErrorRecordThatNamesNoSecret) {
    auto server = protected_server();
    collected_log log;
    RedisLockService service("redis://:wrong-Secret-4@" + server->connect_string(), logged(log, log_level::error));
    Lock lock = service.make_lock("refused");
    std::error_code ec;
    EXPECT_FALSE(lock.try_lock(ec));
    EXPECT_EQ(ec, errc::auth_failed) << ec.message();
    EXPECT_TRUE(wait_until([&] {
        return log.has_at(log_level::error, "redis", server->connect_string() + " (commands) refused the connection's setup");
    })) << "the refused AUTH was not logged";
    EXPECT_FALSE(log.mentions("wrong-Secret-4"));
    EXPECT_FALSE(log.mentions(redis_password));
    for (const auto& r : log.all()) EXPECT_EQ(r.level, log_level::error) << "above the sink's level: " << r.message;
}

TEST(RedlockLog, ARenewalWithoutAMajorityWarnsAndTheLossIsAnError) {
    std::vector<std::unique_ptr<testing::RedisServer>> servers;
    std::vector<std::string> addresses;
    for (int i = 0; i < 5; ++i) {
        servers.push_back(std::make_unique<testing::RedisServer>());
        addresses.push_back(servers.back()->connect_string());
    }
    collected_log log;
    RedlockService service(addresses, logged(log, log_level::warn));
    Lock lock = service.make_lock("majority");
    lock.lock();
    auto lost = lock.async_wait_lost(boost::asio::use_future);
    for (int i = 0; i < 3; ++i) servers[static_cast<std::size_t>(i)]->kill9();
    EXPECT_EQ(get_within(lost, 10s), errc::session_expired);
    EXPECT_TRUE(wait_until([&] {
        return log.has_at(log_level::warn, "redlock", "lock zklock:{majority}: its renewal reached no majority of the 5");
    }));
    EXPECT_TRUE(log.has_at(log_level::error, "redlock", "lock zklock:{majority} lost: its lease ran out"));
    EXPECT_FALSE(log.has("redlock", "connected to")) << "an info record reached a warn sink";
}

} // namespace
} // namespace zklock::test
