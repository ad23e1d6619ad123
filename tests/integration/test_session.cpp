#include "silent_listener.hpp"
#include "support.hpp"

#include <zklock/queue_watch.hpp>
#include <zklock/semaphore.hpp>

#include <zklock/testing/faults.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <boost/asio/io_context.hpp>

#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

using namespace zklock;
using namespace zklock::test;

class SessionTest : public ServerTest {};

TEST_F(SessionTest, ConnectsAndNegotiatesTheTimeout) {
    Session s(options(3000ms));
    s.connect();
    EXPECT_EQ(s.state(), session_state::connected);
    EXPECT_NE(s.session_id(), 0);
    EXPECT_EQ(s.negotiated_timeout(), 3000ms);
}

TEST_F(SessionTest, TimeoutIsClampedByTheServer) {
    Session s(options(60000ms));
    s.connect();
    EXPECT_EQ(s.negotiated_timeout(), 4000ms);  // maxSessionTimeout of the test server
}

// Nothing listens: every address refuses, and connect() says so as soon as
// each has, long before its deadline (a wait for the deadline ends in errc::timeout).
TEST(SessionNoServer, ConnectWhereNothingListensIsRefusedWithoutWaitingForTheDeadline) {
    SessionOptions o;
    o.connect = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port()) + ",127.0.0.1:" +
                std::to_string(zklock::testing::free_loopback_port());
    o.connect_timeout = std::chrono::seconds(30);
    Session s(o);
    std::error_code ec;
    s.connect(ec);
    EXPECT_EQ(ec, errc::connection_refused) << ec.message();
    EXPECT_EQ(ec, std::errc::connection_refused);
    EXPECT_NE(s.state(), session_state::connected);
    try {
        s.connect();
        FAIL() << "connected to nothing";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::connection_refused);
        EXPECT_NE(std::string(e.what()).find(o.connect), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
    }
}

// Two servers, both down: after each failed connect the C client moves two
// places along its list, so with two addresses it comes back, round after
// round, to the one it tried first. The Session steers it, so once the other
// server starts, the session connects to it.
TEST(SessionNoServer, AfterARoundOfRefusalsEveryServerIsTriedAgain) {
    const auto ports = zklock::testing::free_loopback_ports(2);
    std::mutex m;
    std::condition_variable changed;
    std::vector<std::uint16_t> refused;  // in the order the C client tried them
    bool connected = false;
    SessionOptions o;
    o.connect = "127.0.0.1:" + std::to_string(ports[0]) + ",127.0.0.1:" + std::to_string(ports[1]);
    o.connect_timeout = std::chrono::seconds(60);
    o.log.level = log_level::error;
    o.log.callback = [&](const log_record& r) {
        if (r.source != "zookeeper" || r.message.find("errno=111") == std::string_view::npos) return;
        for (const auto port : ports) {
            if (r.message.find(":" + std::to_string(port) + " ") == std::string_view::npos) continue;
            const std::lock_guard lk(m);
            refused.push_back(port);
            changed.notify_all();
        }
    };
    Session s(o);
    auto subscription = s.subscribe([&](session_event e, std::int64_t) {
        if (e != session_event::connected) return;
        const std::lock_guard lk(m);
        connected = true;
        changed.notify_all();
    });
    std::error_code ec;
    s.connect(ec);
    ASSERT_EQ(ec, errc::connection_refused) << ec.message();
    std::uint16_t second = 0;
    {
        std::unique_lock lk(m);
        ASSERT_TRUE(changed.wait_for(lk, std::chrono::seconds(30), [&] { return refused.size() >= 2; }));
        ASSERT_NE(refused[0], refused[1]) << "the first round tried one server twice";
        second = refused[1];
    }
    zklock::testing::ZooKeeperServerOptions server_options;
    server_options.port = second;
    zklock::testing::ZooKeeperServer server(server_options);
    std::unique_lock lk(m);
    EXPECT_TRUE(changed.wait_for(lk, std::chrono::seconds(60), [&] { return connected; }))
        << "never connected to 127.0.0.1:" << second << " (tried since the first round: " << [&] {
               std::string tried;
               for (std::size_t i = 2; i < refused.size() && i < 40; ++i) tried += std::to_string(refused[i]) + " ";
               return tried;
           }() << ")";
}

// A listener that never answers the handshake is no refusal: the wait ends at
// its deadline.
TEST(SessionNoServer, ConnectToASilentServerFailsAtTheDeadline) {
    SilentListener silent;
    SessionOptions o;
    o.connect = silent.address();
    o.connect_timeout = 700ms;
    Session s(o);
    std::error_code ec;
    s.connect(ec);
    EXPECT_EQ(ec, errc::timeout) << ec.message();
    try {
        s.connect();
        FAIL() << "connected to a server that never answered";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::timeout);
        EXPECT_NE(std::string(e.what()).find(o.connect), std::string::npos) << e.what();
    }
}

TEST(SessionNoServer, BadConnectStringIsAClearError) {
    SessionOptions o;
    o.connect = "127.0.0.1:2181/bad//chroot";
    o.connect_timeout = 2s;
    Session s(o);
    std::error_code ec;
    s.connect(ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    EXPECT_EQ(s.state(), session_state::closed);
}

TEST_F(SessionTest, ExpiryIsReportedAndANewSessionOpened) {
    auto s = connect();
    EventLog log(*s);
    const auto old_id = s->session_id();
    zklock::testing::expire_session(*s);
    ASSERT_TRUE(log.wait_for(session_event::expired));
    ASSERT_TRUE(log.wait_for(session_event::connected));
    EXPECT_TRUE(wait_until([&] { return s->state() == session_state::connected; }));
    EXPECT_NE(s->session_id(), old_id);
    EXPECT_NE(s->session_id(), 0);
}

TEST_F(SessionTest, ServerRestartWithinTheTimeoutKeepsTheSession) {
    own_server(20s);  // it restarts the server, within a session timeout
    auto s = connect(20s);
    EventLog log(*s);
    const auto id = s->session_id();
    server_->stop();
    ASSERT_TRUE(log.wait_for(session_event::suspended));
    EXPECT_EQ(s->state(), session_state::suspended);
    server_->restart();
    ASSERT_TRUE(log.wait_for(session_event::reconnected));
    EXPECT_EQ(s->session_id(), id);
    EXPECT_EQ(log.count(session_event::expired), 0u);
    EXPECT_EQ(log.count(session_event::suspended_too_long), 0u);
}

TEST_F(SessionTest, PausedServerSuspendsTheSessionUntilItAnswersAgain) {
    own_server();  // it stops, restarts or pauses the server
    auto s = connect(2000ms);
    EventLog log(*s);
    server_->pause();
    ASSERT_TRUE(log.wait_for(session_event::suspended));
    EXPECT_NE(s->state(), session_state::connected);
    server_->resume();
    // Same session (reconnected) or, when the pause outlasted it, a new one.
    EXPECT_TRUE(wait_until([&] { return s->state() == session_state::connected; }, 20s));
}

TEST_F(SessionTest, RunsOnTheCallersExecutor) {
    boost::asio::io_context ioc;
    Session s(ioc.get_executor(), options());
    std::optional<std::error_code> result;
    std::error_code nested;
    s.async_connect([&](std::error_code ec) {
        result = ec;
        s.connect(nested);  // on the thread that runs the session: refused, not a hang
    });
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!result && std::chrono::steady_clock::now() < deadline) ioc.run_one_for(100ms);
    ASSERT_TRUE(result.has_value());
    EXPECT_FALSE(*result) << result->message();
    EXPECT_EQ(nested, errc::would_deadlock);
    s.close();  // runs when the executor next runs
    const auto closing = std::chrono::steady_clock::now() + 10s;
    while (s.state() != session_state::closed && std::chrono::steady_clock::now() < closing) ioc.run_one_for(100ms);
    EXPECT_EQ(s.state(), session_state::closed);
}

TEST_F(SessionTest, BlockingQueriesAndLockOnTheSessionsThreadAreRefused) {
    boost::asio::io_context ioc;
    Session s(ioc.get_executor(), options());
    const auto path = lock_path();
    std::optional<std::error_code> connected;
    std::error_code listed, watched, read_permits, locked;
    s.async_connect([&](std::error_code ec) {
        connected = ec;
        // Each would wait for a reply only this thread can deliver.
        list_contenders(s, path, listed);
        QueueWatch watch(s, path);
        watch.next(watched);
        stored_permits(s, path, read_permits);
        Mutex m(s, path);
        try {
            m.lock();
        } catch (const error& e) {
            locked = e.code();
        }
    });
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!connected && std::chrono::steady_clock::now() < deadline) ioc.run_one_for(100ms);
    ASSERT_TRUE(connected.has_value());
    EXPECT_FALSE(*connected) << connected->message();
    EXPECT_EQ(listed, errc::would_deadlock);
    EXPECT_EQ(watched, errc::would_deadlock);
    EXPECT_EQ(read_permits, errc::would_deadlock);
    EXPECT_EQ(locked, errc::would_deadlock);
    s.close();
    const auto closing = std::chrono::steady_clock::now() + 10s;
    while (s.state() != session_state::closed && std::chrono::steady_clock::now() < closing) ioc.run_one_for(100ms);
    EXPECT_EQ(s.state(), session_state::closed);
}

TEST_F(SessionTest, CloseFailsPendingWaitsAndIsIdempotent) {
    auto s = connect();
    s->close();
    s->close();
    EXPECT_EQ(s->state(), session_state::closed);
    std::error_code ec;
    s->connect(ec);
    EXPECT_EQ(ec, errc::session_closed);
}
