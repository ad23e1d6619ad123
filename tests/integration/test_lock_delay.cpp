// Lock-delay against a real server: a clean release hands over at once; the
// successor of a holder that went without releasing waits at least the delay
// (a lower bound on a monotonic clock), and so does the first holder of a
// directory that is new or was reaped; a paused holder that resumes within
// the delay acts while nobody else holds. The tests share one server.
#include "support.hpp"

#include <zklock/fencing.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/testing/faults.hpp>

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <string>
#include <system_error>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;

namespace {

class LockDelayTest : public ServerTest {
protected:
    static MutexOptions delayed(std::chrono::milliseconds delay) {
        MutexOptions o;
        o.lock_delay = delay;
        return o;
    }
    // A lock whose directory records a clean release, as one in use has: a
    // persistent directory (nothing reaps it during the test) held once and
    // released cleanly. A new directory's first holder waits the delay
    // (ANewDirectorysFirstHolderWaitsAtLeastTheDelay); this one's, 1 ms.
    std::string used_lock_path(const std::string& name = "lock", std::size_t permits = 0) {
        const auto path = lock_path(name);
        auto s = connect();
        for (auto at = path.find('/', 1);; at = path.find('/', at + 1)) {
            try {
                zt::create_node(*s, path.substr(0, at));
            } catch (const std::system_error& e) {
                if (e.code() != errc::node_exists) throw;
            }
            if (at == std::string::npos) break;
        }
        if (permits > 0) {
            SemaphoreOptions o;
            o.lock_delay = 1ms;
            Semaphore sem(*s, path, permits, o);
            auto p = sem.permit();
            p.lock();
            p.unlock();
        } else {
            Mutex m(*s, path, delayed(1ms));
            m.lock();
            m.unlock();
        }
        wait_for_contenders(*s, path, 0, 10s);
        return path;
    }
};

using steady = std::chrono::steady_clock;

} // namespace

// A delay no test waits out: any grant that came within the test's deadlines
// came without it.
constexpr auto forever = std::chrono::hours(1);

TEST_F(LockDelayTest, ACleanReleaseHandsOverWithoutTheDelay) {
    const auto path = used_lock_path();
    auto s1 = connect();
    auto s2 = connect();
    auto observer = connect();
    Mutex first(*s1, path, delayed(forever));
    ASSERT_TRUE(first.try_lock_for(10s)) << "its last holder released it cleanly";
    Mutex waiter(*s2, path, delayed(forever));
    auto granted = waiter.async_lock(boost::asio::use_future);
    wait_for_contenders(*observer, path, 2, 10s);
    wait_for_watcher(*s2, first.node_path());  // the waiter listed with the holder ahead of it
    first.unlock();
    EXPECT_FALSE(get_within(granted)) << "the waiter was handed the lock cleanly";
    // The record keeps the directory's data apart from it, and a newcomer to
    // the emptied lock is granted at once too.
    waiter.unlock();
    wait_for_contenders(*observer, path, 0, 10s);
    ASSERT_TRUE(first.try_lock_for(10s));
    first.unlock();
}

TEST_F(LockDelayTest, ASemaphoresPermitCountSurvivesTheRecord) {
    const auto path = used_lock_path("lock", 2);
    auto s = connect();
    SemaphoreOptions o;
    o.lock_delay = forever;
    Semaphore sem(*s, path, 2, o);
    auto a = sem.permit();
    ASSERT_TRUE(a.try_lock_for(10s));
    auto holder = sem.permit();  // keeps the directory's last change a release's
    ASSERT_TRUE(holder.try_lock_for(10s));
    a.unlock();
    // The clean release recorded itself beside the count, not over it.
    Semaphore other_count(*s, path, 3, o);
    std::error_code ec;
    EXPECT_FALSE(other_count.permit().try_lock_for(10s, ec));
    EXPECT_EQ(ec, errc::permits_mismatch);
    auto b = sem.permit();
    EXPECT_TRUE(b.try_lock_for(10s)) << "a permit released cleanly is granted at once";
}

TEST_F(LockDelayTest, AnExpiredHoldersSuccessorWaitsAtLeastTheDelay) {
    constexpr auto delay = 1500ms;
    const auto path = used_lock_path();
    auto holder_session = connect();
    auto s2 = connect();
    auto observer = connect();
    Mutex holder(*holder_session, path, delayed(delay));
    holder.lock();
    Mutex waiter(*s2, path, delayed(delay));
    auto f = granted_at(waiter);
    wait_for_contenders(*observer, path, 2, 10s);
    const auto lost_at = steady::now();
    zt::expire_session(*holder_session);
    const auto t = get_within(f, 15s);
    EXPECT_GE(t - lost_at, delay) << "granted before the delay after the holder's loss";
    waiter.unlock();
}

TEST_F(LockDelayTest, ANewcomerAfterADeletedHoldersNodeWaitsAtLeastTheDelay) {
    constexpr auto delay = 1500ms;
    const auto path = used_lock_path();
    auto s1 = connect();
    auto s2 = connect();
    auto observer = connect();
    Mutex holder(*s1, path, delayed(delay));
    holder.lock();
    const auto lost_at = steady::now();
    zt::delete_node(*observer, holder.node_path());  // gone without a clean release
    Mutex newcomer(*s2, path, delayed(delay));
    ASSERT_TRUE(newcomer.try_lock_for(15s));
    EXPECT_GE(steady::now() - lost_at, delay) << "the first at an empty queue whose last holder was lost";
    newcomer.unlock();
}

// A new directory, or one the server reaped once it was empty (a container),
// has no record of how its last holder left: its first holder waits.
TEST_F(LockDelayTest, ANewDirectorysFirstHolderWaitsAtLeastTheDelay) {
    constexpr auto delay = 1500ms;
    const auto path = lock_path();
    auto s1 = connect();
    Mutex first(*s1, path, delayed(delay));
    const auto asked_at = steady::now();
    ASSERT_TRUE(first.try_lock_for(15s));
    EXPECT_GE(steady::now() - asked_at, delay) << "the first holder of a new directory";
    first.unlock();
}

TEST_F(LockDelayTest, ANewcomerAfterTheDirectoryWasReapedWaitsAtLeastTheDelay) {
    constexpr auto delay = 1500ms;
    const auto path = used_lock_path();
    auto s1 = connect();
    auto s2 = connect();
    auto observer = connect();
    Mutex holder(*s1, path, delayed(delay));
    ASSERT_TRUE(holder.try_lock_for(10s));
    const auto lost_at = steady::now();
    // Lost without a release, then the emptied container reaped with the
    // directory's record (as the server's container manager does).
    zt::delete_node(*observer, holder.node_path());
    zt::delete_node(*observer, path);
    Mutex newcomer(*s2, path, delayed(delay));
    ASSERT_TRUE(newcomer.try_lock_for(15s));
    EXPECT_GE(steady::now() - lost_at, delay) << "granted at once in the directory made again";
    newcomer.unlock();
}

// A holder frozen past its session timeout (as by SIGSTOP) resumes within the
// delay and makes its late write: the successor, already first in the queue,
// is not told it holds yet, so the resource sees the two one after the other.
TEST_F(LockDelayTest, APausedHolderResumingWithinTheDelayOverlapsNobody) {
    constexpr auto delay = 2s;
    const auto path = used_lock_path();
    auto holder_session = connect();
    auto s2 = connect();
    auto observer = connect();
    Mutex holder(*holder_session, path, delayed(delay));
    holder.lock();
    const auto late_token = holder.fencing_token();
    Mutex successor(*s2, path, delayed(delay));
    auto granted = successor.async_lock(boost::asio::use_future);
    wait_for_contenders(*observer, path, 2, 10s);

    std::optional<std::int64_t> stored;  // the resource: the highest token it accepted
    {
        zt::SessionFreeze freeze(*holder_session);
        freeze.expire();
        // The server deleted the holder's node: the successor is first now.
        wait_for_contenders(*observer, path, 1, 10s);
    }  // thawed: the old holder wakes up and writes before it reads its loss
    EXPECT_FALSE(successor.is_held()) << "two holders at once: the successor holds while the old one writes";
    ASSERT_TRUE(fence_admits(late_token, stored));
    stored = late_token;

    EXPECT_FALSE(get_within(granted, 15s));
    EXPECT_TRUE(fence_admits(successor.fencing_token(), stored));
    EXPECT_GT(successor.fencing_token(), late_token);
    successor.unlock();
}

// A lock set records its clean release in every directory of the set, and a
// set's loss delays the next holder of any of its queues.
TEST_F(LockDelayTest, ALockSetHandsOverCleanlyAndItsLossDelaysTheNextHolder) {
    constexpr auto delay = 1500ms;
    const std::vector<std::string> paths = {used_lock_path("a"), used_lock_path("b")};
    auto s1 = connect();
    auto s2 = connect();
    auto s3 = connect();
    auto observer = connect();
    MultiMutexOptions o;
    o.lock_delay = forever;
    MultiMutex first(*s1, paths, o);
    first.lock();
    MultiMutex second(*s2, paths, o);
    auto granted = second.async_lock(boost::asio::use_future);
    wait_for_contenders(*observer, paths[1], 2, 10s);
    for (const auto& node : first.node_paths()) wait_for_watcher(*s2, node);  // listed with `first` ahead in both
    first.unlock();
    EXPECT_FALSE(get_within(granted)) << "the set was handed over cleanly in both queues";

    MultiMutexOptions d;
    d.lock_delay = delay;
    MultiMutex next(*s3, {paths[1]}, d);
    auto f = granted_at(next);
    wait_for_contenders(*observer, paths[1], 2, 10s);
    const auto lost_at = steady::now();
    zt::expire_session(*s2);
    EXPECT_GE(get_within(f, 15s) - lost_at, delay);
    next.unlock();
}
