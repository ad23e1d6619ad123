// A Session's log sink: the C client's messages about that session's
// connection and zklock's own events reach the sink of the session they are
// about, and only the program changes the C client's process-wide level.
#include "log_support.hpp"
#include "support.hpp"

#include <zklock/backends.hpp>

#include <zklock/testing/faults.hpp>

#include <zookeeper.h>
#include <zookeeper_log.h>

#include <cstdio>

using namespace zklock;
using namespace zklock::test;

namespace {

using collected = collected_log;

class SessionLogTest : public ServerTest {
protected:
    std::unique_ptr<Session> connect_with(log_sink sink) {
        auto o = options();
        o.log = std::move(sink);
        auto s = std::make_unique<Session>(o);
        s->connect();
        return s;
    }
};

TEST_F(SessionLogTest, EachSinkGetsItsOwnSessionsClientMessagesAndEvents) {
    collected a, b;
    auto sa = connect_with(a.sink(log_level::info));
    auto sb = connect_with(b.sink(log_level::info));
    // The C client says which session the server established, with its id.
    ASSERT_TRUE(wait_until([&] { return a.has("zookeeper", "sessionId=" + hex(sa->session_id())); }))
        << "no C-client message about session A reached A's sink";
    ASSERT_TRUE(wait_until([&] { return b.has("zookeeper", "sessionId=" + hex(sb->session_id())); }));
    EXPECT_FALSE(a.has("zookeeper", hex(sb->session_id()))) << "a C-client message about session B reached A's sink";
    EXPECT_FALSE(b.has("zookeeper", hex(sa->session_id()))) << "a C-client message about session A reached B's sink";
    EXPECT_TRUE(a.has("zklock", "session " + hex(sa->session_id()) + " established"));
    for (const auto& r : a.all()) EXPECT_LE(r.level, log_level::info) << r.message;
}

TEST_F(SessionLogTest, ALostLockIsLoggedUpToTheSinksLevel) {
    collected c;
    auto s = connect_with(c.sink(log_level::warn));
    const auto path = lock_path();
    Mutex m(*s, path);
    m.lock();
    auto other = connect();
    zklock::testing::delete_node(*other, m.node_path());  // someone else deletes the holder's node
    ASSERT_TRUE(wait_until([&] { return c.has("zklock", "lock " + path + " lost"); }))
        << "the loss was not logged";
    for (const auto& r : c.all()) EXPECT_LE(r.level, log_level::warn) << "above the sink's level: " << r.message;
    EXPECT_FALSE(c.has("zklock", "established")) << "an info record reached a warn sink";
}

TEST_F(SessionLogTest, NoSessionChangesTheCClientsProcessWideLevelOnlyTheProgramDoes) {
    const auto before = zookeeper_client_log_level();
    set_zookeeper_client_log_level(log_level::warn);
    EXPECT_EQ(logLevel, ZOO_LOG_LEVEL_WARN);
    {
        auto quiet = connect();  // client_log_level 0, no sink
        EXPECT_EQ(logLevel, ZOO_LOG_LEVEL_WARN) << "a Session without a sink changed the C client's level";
        collected c;
        auto loud = connect_with(c.sink(log_level::debug));
        EXPECT_EQ(logLevel, ZOO_LOG_LEVEL_WARN) << "a Session whose sink asks for debug changed the C client's level";
        EXPECT_EQ(zookeeper_client_log_level(), log_level::warn);
        // Asked by the program, the C client's debug lines reach the sink.
        set_zookeeper_client_log_level(log_level::debug);
        EXPECT_EQ(logLevel, ZOO_LOG_LEVEL_DEBUG);
        Mutex m(*loud, lock_path());  // requests: the C client logs their steps at debug
        m.lock();
        m.unlock();
        EXPECT_TRUE(wait_until([&] { return c.has_at(log_level::debug, "zookeeper", ""); }))
            << "no C-client debug line reached a debug sink after set_zookeeper_client_log_level(debug)";
        set_zookeeper_client_log_level(log_level::none);
        EXPECT_EQ(static_cast<int>(logLevel), 0);
        EXPECT_EQ(zookeeper_client_log_level(), log_level::none);
    }
    set_zookeeper_client_log_level(before);
}

TEST_F(SessionLogTest, OpenLockServiceHandsItsSinkToTheZooKeeperSession) {
    collected c;
    BackendOptions o;
    o.zookeeper = options().connect;
    o.log = c.sink(log_level::info);
    auto service = open_lock_service("zookeeper", o);
    EXPECT_TRUE(c.has("zklock", "established")) << "the session's events did not reach BackendOptions::log";
    EXPECT_TRUE(c.has("zookeeper", "sessionId=")) << "the C client's lines did not reach BackendOptions::log";
}

}  // namespace
