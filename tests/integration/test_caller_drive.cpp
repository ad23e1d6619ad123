// A blocking call on a Session of its own thread runs the session's loop on
// the caller's thread (src/support/loop_baton.hpp). What that must keep:
// threads sharing one Session still take turns on its locks and each gets
// through; work that arrives while no caller runs the loop is still done (the
// session's thread takes the loop back); a blocking call from a handler that
// a driving caller runs is refused, not deadlocked.
#include "support.hpp"

#include <zklock/testing/faults.hpp>

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

using namespace zklock;
using namespace zklock::test;

class CallerDriveTest : public ServerTest {};

// Four threads, one Session, two lock paths, a Mutex each: one thread drives
// the session's loop while the others wait behind it (on the session's
// thread, or on the driver, which runs their work), and each path is held by
// one thread at a time.
TEST_F(CallerDriveTest, ThreadsSharingOneSessionTakeTurnsOnItsLocks) {
    auto s = connect();
    const std::string paths[2] = {lock_path("a"), lock_path("b")};
    std::atomic<int> inside[2] = {0, 0};
    std::atomic<int> overlaps{0}, grants{0};
    constexpr int rounds = 10;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            Mutex m(*s, paths[t % 2]);
            for (int i = 0; i < rounds; ++i) {
                std::error_code ec;
                if (!m.try_lock_for(20s, ec) || ec) {
                    ADD_FAILURE() << "thread " << t << " round " << i << ": " << (ec ? ec.message() : "timed out");
                    return;
                }
                if (inside[t % 2].fetch_add(1) != 0) ++overlaps;
                ++grants;
                inside[t % 2].fetch_sub(1);
                m.unlock();
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(overlaps.load(), 0);
    EXPECT_EQ(grants.load(), 4 * rounds);
}

// A caller took the loop for its lock() and went away holding: the loss of
// its lock (the node deleted by another session) must still be seen, by the
// session's thread, which takes the loop back once no caller runs it.
TEST_F(CallerDriveTest, ALossWhileTheCallerIsAwayIsReported) {
    auto s = connect();
    auto admin = connect();
    const auto path = lock_path();
    Mutex m(*s, path);
    // A callback, not a wait: registering it posts nothing to the session.
    std::promise<std::error_code> lost;
    auto lost_future = lost.get_future();
    std::atomic<bool> told{false};
    m.on_lost([&](std::error_code ec) {
        if (!told.exchange(true)) lost.set_value(ec);
    });
    m.lock();
    // Nothing of `s` is called from now on: only its own thread can see it.
    zklock::testing::delete_node(*admin, m.node_path());
    EXPECT_EQ(get_within(lost_future, 20s), errc::node_deleted);
    EXPECT_FALSE(m.is_held());
}

// An async acquire completes on a thread that runs the loop, here the caller
// blocked in lock() on another lock of the session: a blocking call from that
// handler would wait for itself, and is refused.
TEST_F(CallerDriveTest, ABlockingCallInAHandlerTheDriverRunsIsRefused) {
    auto s = connect();
    auto holder_session = connect();
    const auto busy = lock_path("busy"), free_path = lock_path("free"), third = lock_path("third");
    Mutex held_elsewhere(*holder_session, busy);
    held_elsewhere.lock();
    Mutex waiting(*s, busy), async_one(*s, free_path), nested(*s, third);
    std::promise<std::error_code> nested_result;
    auto nested_future = nested_result.get_future();
    std::thread caller([&] {
        std::error_code ec;
        waiting.lock(ec);  // drives the loop until held_elsewhere lets go
        EXPECT_FALSE(ec) << ec.message();
        if (!ec) waiting.unlock();
    });
    // Wait until the caller's acquire is queued behind the holder.
    wait_for_contenders(*holder_session, busy, 2, 20s);
    async_one.async_lock([&](std::error_code ec) {
        EXPECT_FALSE(ec) << ec.message();
        std::error_code nested_ec;
        nested.lock(nested_ec);
        if (!nested_ec) nested.unlock();
        nested_result.set_value(nested_ec);
        if (!ec) async_one.unlock();
    });
    EXPECT_EQ(get_within(nested_future, 20s), errc::would_deadlock);
    held_elsewhere.unlock();
    caller.join();
}
