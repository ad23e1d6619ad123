#include "fsm/path.hpp"
#include <zklock/error.hpp>

#include <gtest/gtest.h>

using zklock::detail::validate_lock_path;

namespace {
void expect_refused(std::string_view path, std::string_view reason_part) {
    const auto r = validate_lock_path(path);
    EXPECT_FALSE(r) << "accepted: " << path;
    EXPECT_EQ(r.error, zklock::errc::invalid_path);
    EXPECT_NE(r.reason.find(reason_part), std::string::npos) << "reason was: " << r.reason;
}
} // namespace

TEST(LockPath, AcceptsOrdinaryPaths) {
    for (const char* p : {"/locks", "/locks/orders-42", "/a/b/c/d", "/app/zk.lock", "/locks/ünïcode", "/x/..y", "/x/.y"})
        EXPECT_TRUE(validate_lock_path(p)) << p << ": " << validate_lock_path(p).reason;
}

TEST(LockPath, RefusesBadPathsWithAReason) {
    expect_refused("", "empty");
    expect_refused("locks/a", "absolute");
    expect_refused("/", "root");
    expect_refused("/locks//a", "empty segment");
    expect_refused("/locks/", "end with");
    expect_refused("/locks/./a", "'.'");
    expect_refused("/locks/../a", "'..'");
    expect_refused("/locks/..", "'..'");
    expect_refused(std::string_view("/locks/a\0b", 10), "control");
    expect_refused("/locks/a\tb", "control");
    expect_refused("/locks/a\x7f", "control");
    expect_refused("/locks/\xc2\x85", "control");          // U+0085
    expect_refused("/locks/\xef\xbf\xbf", "control");      // U+FFFF
    expect_refused("/locks/\xee\x80\x80", "control");      // U+E000, private use
    expect_refused("/\xf0\x9f\x94\x92", "Basic Multilingual Plane");      // U+1F512, the lock emoji
    expect_refused("/locks/\xf0\x90\x80\x80", "Basic Multilingual Plane");  // U+10000, the first beyond the BMP
    expect_refused("/locks/\xff", "UTF-8");
    expect_refused("/locks/\xc0\xaf", "UTF-8");            // overlong '/'
    expect_refused("/zookeeper", "reserved");
    expect_refused("/zookeeper/quota", "reserved");
    expect_refused("/" + std::string(zklock::detail::max_lock_path_length, 'a'), "longer");
}

TEST(LockPath, Ancestors) {
    using zklock::detail::ancestors;
    EXPECT_EQ(ancestors("/a/b/c"), (std::vector<std::string>{"/a", "/a/b"}));
    EXPECT_TRUE(ancestors("/a").empty());
}
