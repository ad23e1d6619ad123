// What the tools check and read through the public API, the same rules the
// recipes apply (zklock/lock_path.hpp, queue_view.hpp, secrets.hpp): a user's
// tool gets the answers zklock's own CLI gets, without a server.
#include <zklock/error.hpp>
#include <zklock/lock_path.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/queue_view.hpp>
#include <zklock/secrets.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {
namespace public_checks {  // its own names in a unity batch

using zklock::errc;

TEST(PublicLockPath, AcceptsAndRefusesAsTheRecipes) {
    EXPECT_FALSE(zklock::validate_lock_path("/locks/orders-42"));
    std::string reason = "untouched";
    EXPECT_FALSE(zklock::validate_lock_path("/locks/a", &reason));
    EXPECT_EQ(reason, "untouched");  // no reason for an accepted path
    for (const char* bad : {"", "locks/a", "/", "/locks//a", "/locks/", "/locks/../a", "/zookeeper/x"}) {
        reason.clear();
        EXPECT_EQ(zklock::validate_lock_path(bad, &reason), errc::invalid_path) << bad;
        EXPECT_FALSE(reason.empty()) << bad;
    }
    EXPECT_EQ(zklock::validate_lock_path("/locks/a\x01"), errc::invalid_path);  // no reason asked: still refused
    EXPECT_FALSE(zklock::validate_lock_path("/" + std::string(zklock::max_lock_path_bytes - 1, 'a')));
    EXPECT_EQ(zklock::validate_lock_path("/" + std::string(zklock::max_lock_path_bytes, 'a')), errc::invalid_path);
}

TEST(PublicLockPath, LockSetsRefuseRepeatsNestingAndBadPaths) {
    EXPECT_FALSE(zklock::validate_lock_set({"/locks/a", "/locks/b"}));
    std::string reason;
    EXPECT_EQ(zklock::validate_lock_set({}, &reason), errc::invalid_path);
    EXPECT_FALSE(reason.empty());
    reason.clear();
    EXPECT_EQ(zklock::validate_lock_set({"/locks/a", "/locks/a"}, &reason), errc::invalid_path);
    EXPECT_NE(reason.find("/locks/a"), std::string::npos) << reason;
    reason.clear();
    EXPECT_EQ(zklock::validate_lock_set({"/locks/a", "/locks/a/b"}, &reason), errc::invalid_path);
    EXPECT_NE(reason.find("/locks/a/b"), std::string::npos) << reason;
    EXPECT_EQ(zklock::validate_lock_set({"/locks/a", "relative"}), errc::invalid_path);
}

TEST(PublicLockPath, ConnectStringChroot) {
    EXPECT_EQ(zklock::connect_string_chroot("h1:2181,h2:2181/app"), "/app");
    EXPECT_EQ(zklock::connect_string_chroot("h1:2181/app/sub"), "/app/sub");
    EXPECT_EQ(zklock::connect_string_chroot("h1:2181,h2:2181"), "");
}

zklock::contender node(std::string name, bool shared = false) {
    zklock::contender c;
    c.node = std::move(name);
    c.shared = shared;
    return c;
}

std::string seq(int n) {
    std::string s = std::to_string(n);
    return std::string(10 - s.size(), '0') + s;
}

TEST(QueueView, HoldersUnderEachRule) {
    zklock::queue_listing mutex;
    for (int i = 1; i <= 3; ++i) mutex.contenders.push_back(node("_c_g" + std::to_string(i) + "-lock-" + seq(i)));
    EXPECT_EQ(zklock::queue_holders(mutex), (std::vector<bool>{true, false, false}));
    EXPECT_EQ(zklock::queue_holders(mutex, 2), (std::vector<bool>{true, true, false}));  // a semaphore of 2
    EXPECT_EQ(zklock::queue_holders(mutex, 5), (std::vector<bool>{true, true, true}));

    zklock::queue_listing read_write;  // two readers ahead of a writer, a reader behind it
    read_write.contenders = {node("_c_r1-read-" + seq(1), true), node("_c_r2-read-" + seq(2), true),
                             node("_c_w3-write-" + seq(3)), node("_c_r4-read-" + seq(4), true)};
    EXPECT_EQ(zklock::queue_holders(read_write), (std::vector<bool>{true, true, false, false}));
    read_write.contenders.erase(read_write.contenders.begin(), read_write.contenders.begin() + 2);
    EXPECT_EQ(zklock::queue_holders(read_write), (std::vector<bool>{true, false}));  // the writer first

    EXPECT_TRUE(zklock::queue_holders(zklock::queue_listing{}).empty());
}

TEST(QueueView, ContenderDataOfALockSetAndOfAPlainNode) {
    const auto plain = zklock::parse_contender_data("host-1:4242");
    EXPECT_EQ(plain.data, "host-1:4242");
    EXPECT_TRUE(plain.lock_set.empty());
    const auto set = zklock::parse_contender_data("host-1:4242\nzklock lock set:\n/locks/a\n/locks/b");
    EXPECT_EQ(set.data, "host-1:4242");
    EXPECT_EQ(set.lock_set, (std::vector<std::string>{"/locks/a", "/locks/b"}));
}

TEST(QueueView, ContenderNodesOfEveryDialect) {
    EXPECT_TRUE(zklock::is_contender_node("_c_g-lock-" + seq(7)));
    EXPECT_TRUE(zklock::is_contender_node("_c_g-read-" + seq(7)));
    EXPECT_TRUE(zklock::is_contender_node("job-lock-" + seq(7)));
    for (const char* other : {"leases", "config", "lock-", "_c_g-lock-", "_c_g-lock-12x"})
        EXPECT_FALSE(zklock::is_contender_node(other)) << other;
}

TEST(PublicSecrets, RedactSplitAndPasswordFile) {
    EXPECT_EQ(zklock::redact_secrets("host=h password=hunter2 dbname=d"), "host=h password=*** dbname=d");
    EXPECT_EQ(zklock::redact_secrets("redis://u:hunter2@h:6379"), "redis://u:***@h:6379");
    const auto split = zklock::split_conninfo_password("host=h password='a b' dbname=d");
    ASSERT_TRUE(split);
    EXPECT_EQ(split->password, "a b");
    EXPECT_EQ(split->conninfo.find("a b"), std::string::npos) << split->conninfo;
    EXPECT_FALSE(zklock::split_conninfo_password("host=h sslpassword=x"));
    EXPECT_EQ(zklock::pgpass_line("p:w\\"), "*:*:*:*:p\\:w\\\\\n");
    EXPECT_FALSE(zklock::pgpass_line("two\nlines"));
}

} // namespace public_checks
} // namespace
