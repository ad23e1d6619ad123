// Bounds checked before any server call. No server.
#include "fsm/limits.hpp"
#include <zklock/error.hpp>
#include <zklock/session.hpp>

#include <gtest/gtest.h>

#include <climits>

using namespace zklock;
using namespace std::chrono_literals;

TEST(Limits, ChrootOfAConnectString) {
    EXPECT_EQ(detail::chroot_of("h1:2181,h2:2181/app/x"), "/app/x");
    EXPECT_EQ(detail::chroot_of("127.0.0.1:2181"), "");
}

TEST(Limits, NodeDataUpToTheRequestLimitPassesOneByteMoreIsRefused) {
    const auto acl = acls::creator_all_world_read();
    const std::size_t path = 60;
    const auto overhead = detail::create_request_overhead(path, acl);
    const auto max = detail::default_max_request_bytes;
    EXPECT_TRUE(detail::check_node_data(max - overhead, path, acl, max));
    const auto r = detail::check_node_data(max - overhead + 1, path, acl, max);
    EXPECT_EQ(r.error, errc::invalid_argument);
    EXPECT_NE(r.reason.find("jute.maxbuffer"), std::string::npos) << r.reason;
    // A longer path or ACL leaves less room for the data.
    EXPECT_FALSE(detail::check_node_data(max - overhead, path + 1, acl, max));
    acl_list longer = acl;
    longer.push_back(digest_acl("bob", "pw"));
    EXPECT_FALSE(detail::check_node_data(max - overhead, path, longer, max));
    EXPECT_FALSE(detail::check_node_data(2 * max, path, acl, max));
}

TEST(Limits, SessionOptionsOutOfRangeAreRefused) {
    auto refused = [](SessionOptions o, const char* part) {
        const auto r = detail::validate_session_options(o);
        EXPECT_EQ(r.error, errc::invalid_argument) << part;
        EXPECT_NE(r.reason.find(part), std::string::npos) << r.reason;
    };
    EXPECT_TRUE(detail::validate_session_options(SessionOptions{}));
    SessionOptions o;
    o.session_timeout = 0ms;
    refused(o, "session_timeout");
    o.session_timeout = -5ms;
    refused(o, "session_timeout");
    o.session_timeout = std::chrono::milliseconds(static_cast<long long>(INT_MAX) + 1);
    refused(o, "session_timeout");
    o.session_timeout = std::chrono::milliseconds(INT_MAX);
    EXPECT_TRUE(detail::validate_session_options(o));
    o = {};
    o.connect_timeout = -1ms;
    refused(o, "connect_timeout");
    o = {};
    o.acl = acls::creator_all();
    refused(o, "authenticates as nobody");
    o.auth = {{"digest", "alice:pw"}};
    EXPECT_TRUE(detail::validate_session_options(o));
    o.auth = {{"digest", "alice-without-password"}};
    refused(o, "user:password");
    o = {};
    o.acl = {};
    refused(o, "empty");
}

TEST(Limits, SessionConstructorRefusesBadOptionsAtOnce) {
    SessionOptions o;
    o.session_timeout = 0ms;
    try {
        Session s(o);
        FAIL() << "a zero session timeout was accepted";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("session_timeout"), std::string::npos) << e.what();
    }
}

TEST(Limits, DeadlinesNeverOverflow) {
    const auto before = std::chrono::steady_clock::now();
    // Zero or less: already passed.
    for (auto d : {detail::deadline_after(0s), detail::deadline_after(-3h), detail::deadline_after(0ns)}) {
        ASSERT_TRUE(d);
        EXPECT_LE(*d, std::chrono::steady_clock::now());
        EXPECT_GE(*d, before);
    }
    // Beyond what the clock can hold: no deadline at all.
    EXPECT_FALSE(detail::deadline_after(std::chrono::hours::max()));
    EXPECT_FALSE(detail::deadline_after(std::chrono::seconds::max()));
    EXPECT_FALSE(detail::deadline_after(std::chrono::nanoseconds::max()));
    EXPECT_FALSE(detail::deadline_at(std::chrono::steady_clock::time_point::max()));
    EXPECT_FALSE(detail::deadline_at(std::chrono::system_clock::time_point::max()));
    // Ordinary ones are where they should be.
    const auto d = detail::deadline_after(5s);
    ASSERT_TRUE(d);
    EXPECT_GE(*d, before + 5s);
    EXPECT_LE(*d, std::chrono::steady_clock::now() + 5s);
    const auto past = detail::deadline_at(std::chrono::system_clock::now() - 1h);
    ASSERT_TRUE(past);
    EXPECT_LE(*past, std::chrono::steady_clock::now());
}
