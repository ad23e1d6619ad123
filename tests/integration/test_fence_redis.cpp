// RedisFence and its Lua script against real, password-protected Redis
// servers: a paused ZooKeeper lock holder's late write is refused.
#include "fence_support.hpp"

#include <zklock/redis/redis_fence.hpp>
#include <zklock/testing/redis_server.hpp>

#include <boost/asio/use_future.hpp>

#include <future>

namespace zklock::test {
namespace {

constexpr const char* password = "fence-S3cret";  // in a 0600 redis.conf; never on a command line

testing::RedisServerOptions requirepass() {
    testing::RedisServerOptions o;
    o.password = password;
    return o;
}

std::string url(const testing::RedisServer& r, const std::string& userinfo) {
    return "redis://" + userinfo + "@" + r.connect_string();
}

fence::write_fn writer(RedisFence& f, const std::string& key) {
    return [&f, key](std::int64_t token, const std::string& value) { return f.write(key, token, value); };
}
fence::read_fn reader(RedisFence& f, const std::string& key) {
    return [&f, key] { return f.read(key); };
}

TEST(RedisFence, PausedZooKeeperHoldersLateWriteIsRefused) {
    testing::ZooKeeperServer zk(fence::zookeeper_options());
    testing::RedisServer redis(requirepass());
    RedisFence f(url(redis, std::string(":") + password));
    fence::paused_holder_late_write_is_refused(zk, writer(f, "{report}:today"), reader(f, "{report}:today"));
    // A plain GET sees B's value.
    EXPECT_EQ(redis.command({"GET", "{report}:today"}), "$1\r\nB\r\n");
}

TEST(RedisFence, EqualAndHigherTokensAreAcceptedLowerRefusedAlsoAfterScriptFlush) {
    testing::RedisServerOptions o;
    o.users = {{"fencer", "fencer-Pw"}};  // a Redis 6 ACL user; the default user is off
    testing::RedisServer redis(o);
    RedisFence f(url(redis, "fencer:fencer-Pw"));
    f.load();
    fence::equal_and_higher_accepted_lower_refused(writer(f, "k"), reader(f, "k"));

    // The server forgets the script (as after a restart): EVALSHA's NOSCRIPT falls back to EVAL.
    EXPECT_EQ(redis.command({"SCRIPT", "FLUSH"}), "+OK\r\n");
    const std::int64_t big = (std::int64_t{1} << 62) + 1;
    EXPECT_EQ(f.write("k", big - 2, "after flush"), (fenced_write_result{false, big}));
    EXPECT_EQ(f.write("k", big + 1, "after flush"), (fenced_write_result{true, big + 1}));

    // The script as other clients run it: EVAL script 2 key key:fencing-token token value.
    const std::string script(RedisFence::script());
    EXPECT_EQ(redis.command({"EVAL", script, "2", "raw", RedisFence::token_key("raw"), "20", "twenty"}),
              "*2\r\n:1\r\n$2\r\n20\r\n");
    EXPECT_EQ(redis.command({"EVAL", script, "2", "raw", RedisFence::token_key("raw"), "3", "three"}),
              "*2\r\n:0\r\n$2\r\n20\r\n");
    EXPECT_EQ(redis.command({"EVAL", script, "2", "raw", RedisFence::token_key("raw"), "007", "x"}).substr(0, 19),
              "-ERR zklock fence: ");
    EXPECT_EQ(redis.command({"GET", RedisFence::token_key("raw")}), "$2\r\n20\r\n");

    // Asynchronous and error_code forms; bad arguments and a corrupt token key.
    auto refused = f.async_write("raw", 19, "x", boost::asio::use_future);
    EXPECT_EQ(get_within(refused), std::make_tuple(std::error_code(), fenced_write_result{false, 20}));
    auto value = f.async_read("raw", boost::asio::use_future);
    EXPECT_EQ(get_within(value), std::make_tuple(std::error_code(), std::optional<fenced_value>({20, "twenty"})));
    std::error_code ec;
    f.write("raw", 0, "x", ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    redis.command({"SET", RedisFence::token_key("junk"), "not a token"});
    f.write("junk", 5, "x", ec);
    EXPECT_EQ(ec, errc::invalid_argument) << ec.message();
    EXPECT_EQ(redis.command({"EXISTS", "junk"}), ":0\r\n");

    // Credentials: wrong password, none at all.
    RedisFence wrong(url(redis, "fencer:wrong"));
    wrong.write("k", big + 5, "x", ec);
    EXPECT_EQ(ec, errc::auth_failed) << ec.message();
    RedisFence none(redis.connect_string());
    none.write("k", big + 5, "x", ec);
    EXPECT_EQ(ec, errc::no_auth) << ec.message();
    EXPECT_EQ(f.read("k"), (fenced_value{big + 1, "after flush"}));
}

TEST(RedisFence, ConcurrentWritersInRandomOrderLeaveTheHighestTokensValue) {
    testing::RedisServer redis(requirepass());
    const auto descriptors_before = fence::open_descriptors();
    const auto seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto lanes = fence::shuffled_lanes(1000, 24, 4, seed);
    std::vector<std::unique_ptr<RedisFence>> fences;
    for (std::size_t i = 0; i < lanes.size(); ++i)
        fences.push_back(std::make_unique<RedisFence>(url(redis, std::string(":") + password)));
    std::vector<std::pair<std::int64_t, std::future<std::tuple<std::error_code, fenced_write_result>>>> writes;
    for (std::size_t i = 0; i < lanes.size(); ++i)
        for (const auto token : lanes[i])
            writes.emplace_back(token, fences[i]->async_write("{contended}", token, fence::value_of(token),
                                                              boost::asio::use_future));
    for (auto& [token, result] : writes) {
        const auto [ec, r] = get_within(result, std::chrono::seconds(30));
        EXPECT_FALSE(ec) << ec.message();
        fence::expect_consistent(token, r);
        if (token == 1024) {
            EXPECT_TRUE(r.applied) << "the highest token is never refused";
        }
    }
    // Every connection the fences opened is close-on-exec.
    const auto inheritable = fence::inheritable_since(descriptors_before);
    EXPECT_TRUE(inheritable.empty()) << ::testing::PrintToString(inheritable);
    EXPECT_EQ(fences[0]->read("{contended}"), (fenced_value{1024, fence::value_of(1024)}));
}

} // namespace
} // namespace zklock::test
