// Redis addresses ("host:port", "redis://user:password@host:port/db") and the
// error replies that concern authentication, without a server.
#include "backends/redis/redis_address.hpp"
#include <zklock/error.hpp>
#include <zklock/redis_address.hpp>

#include <string>

#include <gtest/gtest.h>

namespace zklock::detail {
namespace {

redis_address parsed(std::string_view text) {
    std::error_code ec;
    std::string reason;
    auto a = parse_redis_address(text, ec, &reason);
    EXPECT_FALSE(ec) << text << ": " << reason;
    return a;
}

/// The reason a refused address gives; fails the test when it is accepted.
std::string refused(std::string_view text) {
    std::error_code ec;
    std::string reason;
    parse_redis_address(text, ec, &reason);
    EXPECT_EQ(ec, errc::invalid_argument) << text << " was accepted";
    return reason;
}

TEST(RedisAddress, PlainHostPort) {
    EXPECT_EQ(parsed("127.0.0.1:6379"), (redis_address{"127.0.0.1", 6379, "", "", 0}));
    EXPECT_EQ(parsed("redis.example:7000"), (redis_address{"redis.example", 7000, "", "", 0}));
    EXPECT_EQ(parsed("[::1]:6380"), (redis_address{"::1", 6380, "", "", 0}));
}

TEST(RedisAddress, UrlWithPasswordUserAndDb) {
    EXPECT_EQ(parsed("redis://127.0.0.1:6379"), (redis_address{"127.0.0.1", 6379, "", "", 0}));
    EXPECT_EQ(parsed("redis://h"), (redis_address{"h", 6379, "", "", 0}));  // the default port
    EXPECT_EQ(parsed("redis://:s3cret@h:1"), (redis_address{"h", 1, "", "s3cret", 0}));  // requirepass
    EXPECT_EQ(parsed("redis://alice:s3cret@h:2/5"), (redis_address{"h", 2, "alice", "s3cret", 5}));
    EXPECT_EQ(parsed("redis://h:2/0"), (redis_address{"h", 2, "", "", 0}));
    EXPECT_EQ(parsed("redis://h/15"), (redis_address{"h", 6379, "", "", 15}));
    EXPECT_EQ(parsed("redis://[::1]:7/3"), (redis_address{"::1", 7, "", "", 3}));
    EXPECT_EQ(parsed("redis://alice:s3cret@[::1]"), (redis_address{"::1", 6379, "alice", "s3cret", 0}));
}

TEST(RedisAddress, UserinfoIsPercentDecodedAndSplitAtTheLastAt) {
    // A password may hold ':' and '@' (the userinfo ends at the last '@').
    EXPECT_EQ(parsed("redis://alice:a:b@c@h:1"), (redis_address{"h", 1, "alice", "a:b@c", 0}));
    EXPECT_EQ(parsed("redis://al%69ce:p%40ss%3Aw%2f@h:1"), (redis_address{"h", 1, "alice", "p@ss:w/", 0}));
    EXPECT_EQ(parsed("redis://:%20x%20@h:1"), (redis_address{"h", 1, "", " x ", 0}));
}

TEST(RedisAddress, MalformedAddressesAreRefused) {
    for (const char* bad : {"", "localhost", "h:", ":6379", "h:0", "h:65536", "h:12x", "[::1", "[::1]6379",
                            "redis://", "redis://:6379", "redis://h:", "redis://h:99999", "redis://h:1/x",
                            "redis://h:1/-1", "redis://h:1/2147483648", "redis://h:1/0?timeout=1",
                            "redis://h:1#x", "http://h:1", "unix:///tmp/redis.sock"}) {
        SCOPED_TRACE(bad);
        EXPECT_FALSE(refused(bad).empty());
    }
    EXPECT_NE(refused("rediss://h:1").find("TLS"), std::string::npos);
}

TEST(RedisAddress, RefusalsNeverQuoteTheCredentials) {
    for (const char* bad : {"redis://alice:hunter2@h:99999", "redis://alice:hunter2@h:1/x", "redis://hunter2@h:1",
                            "redis://alice:hunter2%zz@h:1", "redis://alice:hunter2@h:1?x=1", "alice:hunter2@h:1",
                            "rediss://alice:hunter2@h:1", "redis://alice:@h:1", "redis://alice:hunter2 x@h:1",
                            "redis://alice:hunter2\n@h:1"}) {
        SCOPED_TRACE(bad);
        const auto reason = refused(bad);
        EXPECT_EQ(reason.find("hunter2"), std::string::npos) << reason;
        EXPECT_FALSE(reason.empty());
    }
    // The refused address is still named, its userinfo masked.
    EXPECT_NE(refused("redis://alice:hunter2@h:99999").find("redis://***@h:99999"), std::string::npos);
}

TEST(RedisAddress, SetupCommandsAuthenticateThenSelect) {
    using commands = std::vector<std::vector<std::string>>;
    EXPECT_EQ(redis_setup_commands({"h", 1, "", "", 0}), commands{});
    EXPECT_EQ(redis_setup_commands({"h", 1, "", "pw", 0}), (commands{{"AUTH", "pw"}}));
    EXPECT_EQ(redis_setup_commands({"h", 1, "alice", "pw", 0}), (commands{{"AUTH", "alice", "pw"}}));
    EXPECT_EQ(redis_setup_commands({"h", 1, "alice", "pw", 3}), (commands{{"AUTH", "alice", "pw"}, {"SELECT", "3"}}));
    EXPECT_EQ(redis_setup_commands({"h", 1, "", "", 3}), (commands{{"SELECT", "3"}}));
}

TEST(RedisAddress, AuthenticationRepliesHaveTheirOwnErrors) {
    // Redis 6+ and 7.
    EXPECT_EQ(redis_error_code("WRONGPASS invalid username-password pair or user is disabled."), errc::auth_failed);
    EXPECT_EQ(redis_error_code("NOAUTH Authentication required."), errc::no_auth);
    EXPECT_EQ(redis_error_code("NOPERM this user has no permissions to run the 'eval' command"), errc::no_auth);
    EXPECT_EQ(redis_error_code("ERR AUTH <password> called without any password configured for the default user. "
                               "Are you sure your configuration is correct?"),
              errc::auth_failed);
    // Redis 5 and older.
    EXPECT_EQ(redis_error_code("ERR invalid password"), errc::auth_failed);
    EXPECT_EQ(redis_error_code("ERR Client sent AUTH, but no password is set"), errc::auth_failed);
    // Everything else stays a protocol error.
    EXPECT_EQ(redis_error_code("ERR DB index is out of range"), errc::invalid_argument);  // SELECT
    EXPECT_EQ(redis_error_code("ERR Error running script"), std::errc::protocol_error);
    EXPECT_EQ(redis_error_code("NOAUTHX"), std::errc::protocol_error);
    EXPECT_EQ(redis_error_code(""), std::errc::protocol_error);
}

} // namespace
} // namespace zklock::detail

TEST(RedisAddress, ResolveFillsWhatTheTextDoesNotName) {
    using zklock::detail::resolve_redis_address;
    std::error_code ec;
    auto a = resolve_redis_address("127.0.0.1:6380", "svc", "opt-pw", 3, ec);
    ASSERT_FALSE(ec);
    EXPECT_EQ(a.user, "svc");
    EXPECT_EQ(a.password, "opt-pw");
    EXPECT_EQ(a.db, 3);
    // The URL's own credentials and db win, "/0" included.
    a = resolve_redis_address("redis://u:url-pw@h:6379/0", "svc", "opt-pw", 3, ec);
    ASSERT_FALSE(ec);
    EXPECT_EQ(a.user, "u");
    EXPECT_EQ(a.password, "url-pw");
    EXPECT_EQ(a.db, 0);
    a = resolve_redis_address("redis://h", "", "", 5, ec);
    ASSERT_FALSE(ec);
    EXPECT_EQ(a.db, 5);
    resolve_redis_address("redis://h:99999", "", "", 0, ec);
    EXPECT_EQ(ec, zklock::errc::invalid_argument);
}

namespace zklock {
namespace {

// The public reading (zklock::backends) is the backends' own, without the
// password, and its errors never quote the credentials.
TEST(RedisServerAddress, IsTheBackendsReadingWithoutThePassword) {
    EXPECT_EQ(parse_redis_address("[::1]:7000"), (RedisServerAddress{"::1", 7000, "", 0, false}));
    EXPECT_EQ(parse_redis_address("redis://svc:s%40cret@redis.example/4"),
              (RedisServerAddress{"redis.example", 6379, "svc", 4, true}));
    EXPECT_EQ(parse_redis_address("redis://:pw@h:6380"), (RedisServerAddress{"h", 6380, "", 0, true}));
    EXPECT_FALSE(parse_redis_address("redis://h").has_password);
}

TEST(RedisServerAddress, RefusesWithAMessageThatHidesTheCredentials) {
    for (const char* text : {"redis://svc:hunter2@h:99999", "redis://svc:hunter2@h/x", "h", "rediss://svc:hunter2@h"}) {
        try {
            (void)parse_redis_address(text);
            ADD_FAILURE() << text << " was accepted";
        } catch (const error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument) << text;
            EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
        }
    }
}

} // namespace
} // namespace zklock
