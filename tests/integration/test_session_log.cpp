// A Session's log sink: the C client's messages about that session's
// connection and zklock's own events reach the sink of the session they are
// about, and nothing of the C client's process-wide level is lowered.
#include "support.hpp"

#include <zklock/testing/faults.hpp>

#include <zookeeper.h>
#include <zookeeper_log.h>

#include <cstdio>
#include <mutex>

using namespace zklock;
using namespace zklock::test;

namespace {

/// The records a sink received, copied (the views live only during the callback).
struct collected {
    struct record {
        log_level level;
        std::string source, message;
        std::int64_t session_id;
    };
    mutable std::mutex m;
    std::vector<record> records;

    log_sink sink(log_level level) {
        return log_sink{level, [this](const log_record& r) {
                            std::lock_guard lk(m);
                            records.push_back({r.level, std::string(r.source), std::string(r.message), r.session_id});
                        }};
    }
    std::vector<record> all() const {
        std::lock_guard lk(m);
        return records;
    }
    bool has(const std::string& source, const std::string& text) const {
        for (const auto& r : all())
            if (r.source == source && r.message.find(text) != std::string::npos) return true;
        return false;
    }
};

std::string hex(std::int64_t id) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
    return buf;
}

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

TEST_F(SessionLogTest, TheCClientsProcessWideLevelIsNeverLowered) {
    const auto before = logLevel;
    zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    {
        auto s = connect();  // client_log_level 0, no sink
        EXPECT_EQ(logLevel, ZOO_LOG_LEVEL_WARN) << "a Session lowered the C client's level";
        collected c;
        auto loud = connect_with(c.sink(log_level::info));
        EXPECT_EQ(logLevel, ZOO_LOG_LEVEL_INFO) << "a sink that asks for info did not raise the level";
    }
    zoo_set_debug_level(before);
}

}  // namespace
