// Mutex::on_event: the events of one lock object, in order, on a real server.
#include "support.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/testing/faults.hpp>

#include <mutex>

using namespace zklock;
using namespace zklock::test;

namespace {

/// The events a Mutex reported, copied as they came.
struct recorder {
    mutable std::mutex m;
    std::vector<lock_event> events;

    std::function<void(const lock_event&)> handler() {
        return [this](const lock_event& e) {
            std::lock_guard lk(m);
            events.push_back(e);
        };
    }
    std::vector<lock_event_kind> kinds() const {
        std::lock_guard lk(m);
        std::vector<lock_event_kind> out;
        for (const auto& e : events) out.push_back(e.kind);
        return out;
    }
    lock_event at(std::size_t i) const {
        std::lock_guard lk(m);
        return events.at(i);
    }
    bool wait_for(std::size_t n) const {
        return wait_until([&] { return kinds().size() >= n; });
    }
};

using kinds = std::vector<lock_event_kind>;
constexpr auto queued = lock_event_kind::queued;
constexpr auto granted = lock_event_kind::granted;
constexpr auto released = lock_event_kind::released;
constexpr auto lost = lock_event_kind::lost;
constexpr auto left = lock_event_kind::left;

class LockEventsTest : public ServerTest {};

TEST_F(LockEventsTest, AWaiterIsQueuedBehindTheHolderAndGrantedWhenItLeaves) {
    const auto path = lock_path();
    recorder r1, r2;  // before the sessions: events are posted to their threads until they close
    auto s1 = connect();
    auto s2 = connect();
    Mutex first(*s1, path), second(*s2, path);
    first.on_event(r1.handler());
    second.on_event(r2.handler());

    first.lock();
    ASSERT_TRUE(r1.wait_for(2));
    EXPECT_EQ(r1.kinds(), (kinds{queued, granted}));
    EXPECT_EQ(r1.at(0).position, 0u);
    EXPECT_EQ(r1.at(0).path, path);
    EXPECT_EQ(r1.at(1).fencing_token, first.fencing_token());

    std::promise<std::error_code> p;
    second.async_lock([&](std::error_code ec) { p.set_value(ec); });
    ASSERT_TRUE(r2.wait_for(1));
    EXPECT_EQ(r2.at(0).kind, queued);
    EXPECT_EQ(r2.at(0).position, 1u);

    first.unlock();
    auto f = p.get_future();
    ASSERT_FALSE(get_within(f, 10s));
    ASSERT_TRUE(r2.wait_for(2));
    EXPECT_EQ(r2.kinds(), (kinds{queued, granted}));
    EXPECT_EQ(r2.at(1).fencing_token, second.fencing_token());
    EXPECT_GT(r2.at(1).waited.count(), 0);
    ASSERT_TRUE(r1.wait_for(3));
    EXPECT_EQ(r1.kinds(), (kinds{queued, granted, released}));
    EXPECT_GT(r1.at(2).held.count(), 0);
    second.unlock();
    ASSERT_TRUE(r2.wait_for(3));
    EXPECT_EQ(r2.kinds(), (kinds{queued, granted, released}));
}

TEST_F(LockEventsTest, AnAcquireThatTimesOutLeavesTheQueueAndALossIsReported) {
    const auto path = lock_path();
    recorder rh, rw;
    auto s1 = connect();
    auto s2 = connect();
    Mutex holder(*s1, path), waiter(*s2, path);
    holder.on_event(rh.handler());
    waiter.on_event(rw.handler());
    holder.lock();
    EXPECT_FALSE(waiter.try_lock_for(200ms));
    ASSERT_TRUE(rw.wait_for(2));
    EXPECT_EQ(rw.kinds(), (kinds{queued, left}));
    EXPECT_EQ(rw.at(1).reason, errc::timeout);

    auto other = connect();
    zklock::testing::delete_node(*other, holder.node_path());  // someone else deletes the holder's node
    ASSERT_TRUE(rh.wait_for(3));
    EXPECT_EQ(rh.kinds(), (kinds{queued, granted, lost}));
    EXPECT_EQ(rh.at(2).reason, errc::node_deleted);
}


TEST_F(LockEventsTest, EveryRecipeReportsItsEvents) {
    recorder shared_r, election_r, semaphore_r, set_r, recursive_r;
    auto s = connect();

    // SharedMutex: the read side's events say so.
    SharedMutex rw(*s, lock_path() + "-rw");
    rw.on_event(shared_r.handler());
    rw.lock_shared();
    rw.unlock_shared();
    rw.lock();
    rw.unlock();
    ASSERT_TRUE(shared_r.wait_for(6));
    EXPECT_EQ(shared_r.kinds(), (kinds{queued, granted, released, queued, granted, released}));
    EXPECT_TRUE(shared_r.at(1).shared);
    EXPECT_FALSE(shared_r.at(4).shared);

    // LeaderElection: elected, then resigned.
    LeaderElection election(*s, lock_path() + "-election", "me");
    election.on_event(election_r.handler());
    const auto term = election.campaign();
    election.resign();
    ASSERT_TRUE(election_r.wait_for(3));
    EXPECT_EQ(election_r.kinds(), (kinds{queued, granted, released}));
    EXPECT_EQ(election_r.at(1).fencing_token, term.epoch);

    // Semaphore: each permit's own.
    Semaphore sem(*s, lock_path() + "-semaphore", 2);
    auto permit = sem.permit();
    permit.on_event(semaphore_r.handler());
    permit.lock();
    permit.unlock();
    ASSERT_TRUE(semaphore_r.wait_for(3));
    EXPECT_EQ(semaphore_r.kinds(), (kinds{queued, granted, released}));

    // MultiMutex: one event per step of the set.
    const auto a = lock_path() + "-a", b = lock_path() + "-b";
    MultiMutex set(*s, {a, b});
    set.on_event(set_r.handler());
    set.lock();
    set.unlock();
    ASSERT_TRUE(set_r.wait_for(3));
    EXPECT_EQ(set_r.kinds(), (kinds{queued, granted, released}));
    EXPECT_NE(set_r.at(1).path.find(a), std::string::npos) << set_r.at(1).path;

    // RecursiveMutex: the inner level makes no event.
    RecursiveMutex rec(*s, lock_path() + "-recursive");
    rec.on_event(recursive_r.handler());
    rec.lock();
    rec.lock();
    rec.unlock();
    rec.unlock();
    ASSERT_TRUE(recursive_r.wait_for(3));
    EXPECT_EQ(recursive_r.kinds(), (kinds{queued, granted, released}));
}

}  // namespace
