#include "proof_support.hpp"
#include "support.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/testing/faults.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <set>
#include <shared_mutex>

using namespace zklock;
using namespace zklock::test;

class RecipeTest : public ServerTest {
protected:
    std::size_t queue_length(const std::string& path) {
        auto observer = connect();
        return list_contenders(*observer, path).size();
    }
};

// ---- Semaphore ---------------------------------------------------------------------

// A future of the error_code `lock`'s async_lock completes with.
std::future<std::error_code> locking(QueueLock& lock) {
    auto p = std::make_shared<std::promise<std::error_code>>();
    auto f = p->get_future();
    lock.async_lock([p](std::error_code ec) { p->set_value(ec); });
    return f;
}

TEST_F(RecipeTest, SemaphoreNeverAdmitsMoreThanItsPermits) {
    const auto path = lock_path();
    constexpr int clients = 6;
    constexpr int rounds = 4;
    constexpr std::size_t permits = 2;
    std::mutex m;
    std::condition_variable full;
    const auto give_up = std::chrono::steady_clock::now() + 10s;  // one deadline for every wait
    std::size_t inside = 0, most = 0;
    std::set<std::int64_t> tokens;
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&] {
            auto s = connect();
            Semaphore sem(*s, path, permits);
            auto permit = sem.permit();
            for (int r = 0; r < rounds; ++r) {
                permit.lock();
                ASSERT_TRUE(permit.is_held());
                {
                    std::unique_lock lk(m);
                    most = std::max(most, ++inside);
                    EXPECT_TRUE(tokens.insert(permit.fencing_token()).second);
                    EXPECT_LT(*permit.queue_position(), permits);
                    // Until the permits have been used at once, hold on for a
                    // second holder (with more permits free, one is granted).
                    full.notify_all();
                    full.wait_until(lk, give_up, [&] { return most >= permits; });
                }
                {
                    std::lock_guard lk(m);
                    --inside;
                }
                permit.unlock();
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_LE(most, permits);
    EXPECT_EQ(most, permits) << "the permits were never used at once";
    EXPECT_EQ(tokens.size(), static_cast<std::size_t>(clients * rounds));
}

TEST_F(RecipeTest, SemaphoreGrantsInArrivalOrderAndReportsPositions) {
    const auto path = lock_path();
    auto holder_session = connect();
    Semaphore holders(*holder_session, path, 2);
    auto first = holders.permit();
    auto second = holders.permit();
    first.lock();
    second.lock();
    GrantLog log(2);
    log.holds("first");
    log.holds("second");
    constexpr int waiters = 4;
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<QueueLock> permits;
    permits.reserve(waiters);
    std::vector<std::future<std::error_code>> grants;
    std::mutex m;
    std::vector<std::vector<std::size_t>> positions(waiters);
    for (int i = 0; i < waiters; ++i) {
        sessions.push_back(connect());
        permits.push_back(Semaphore(*sessions.back(), path, 2).permit());
        permits.back().on_queue_position([&m, &positions, i](std::size_t p) {
            std::lock_guard lk(m);
            positions[static_cast<std::size_t>(i)].push_back(p);
        });
        grants.push_back(log.lock(permits.back(), "p" + std::to_string(i)));
        ASSERT_TRUE(wait_until([&] {
            std::lock_guard lk(m);
            return !positions[static_cast<std::size_t>(i)].empty();
        }));
        std::lock_guard lk(m);
        EXPECT_EQ(positions[static_cast<std::size_t>(i)].front(), static_cast<std::size_t>(i + 2));
    }
    // A waiter watches the two nodes just ahead of it (not its own: no single
    // deletion grants it, a listing does). One whose watches all stand on nodes
    // that are still there has been told of no change since it decided to
    // wait, so it cannot be granted before the test releases one of them: then
    // a grant still pending is not pending by luck.
    const auto watching = [&](std::size_t waiter, const std::set<std::string>& nodes) {
        std::set<std::string> seen;
        EXPECT_TRUE(watches_exactly(*server_, *sessions[waiter], nodes, seen))
            << "waiter " << waiter << " watches " << listed(seen) << ", not " << listed(nodes);
    };
    watching(1, {second.node_path(), permits[0].node_path()});
    log.releasing("first");
    first.unlock();
    EXPECT_FALSE(get_within(grants[0]));
    EXPECT_TRUE(permits[0].is_held());
    watching(1, {second.node_path(), permits[0].node_path()});  // both still held: not woken
    EXPECT_EQ(grants[1].wait_for(0ms), std::future_status::timeout) << "granted out of order";
    log.releasing("second");
    second.unlock();
    EXPECT_FALSE(get_within(grants[1]));
    EXPECT_TRUE(permits[1].is_held());
    watching(3, {permits[1].node_path(), permits[2].node_path()});
    log.releasing("p0");
    permits[0].unlock();
    EXPECT_FALSE(get_within(grants[2]));
    EXPECT_TRUE(permits[2].is_held());
    watching(3, {permits[1].node_path(), permits[2].node_path()});  // both still held: not woken
    EXPECT_EQ(grants[3].wait_for(0ms), std::future_status::timeout);
    log.releasing("p1");
    permits[1].unlock();
    EXPECT_FALSE(get_within(grants[3]));
    EXPECT_TRUE(permits[3].is_held());
    // Each grant came after the release that made room for it, never beside two holders.
    EXPECT_EQ(log.entries(), (std::vector<std::string>{"-first", "+p0", "-second", "+p1", "-p0", "+p2", "-p1", "+p3"}));
    EXPECT_TRUE(log.crowded().empty()) << log.crowded().front();
    std::lock_guard lk(m);
    EXPECT_EQ(positions[3].front(), 5u);
    EXPECT_LT(positions[3].back(), 2u) << "the last waiter was not told it reached a slot";
    EXPECT_TRUE(std::is_sorted(positions[3].rbegin(), positions[3].rend())) << "positions only decrease";
}

TEST_F(RecipeTest, SemaphorePermitMismatchIsRefused) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Semaphore two(*a, path, 2);
    auto held = two.permit();
    held.lock();
    Semaphore three(*b, path, 3);
    auto refused = three.permit();
    std::error_code ec;
    refused.lock(ec);
    EXPECT_EQ(ec, errc::permits_mismatch) << ec.message();
    EXPECT_FALSE(refused.is_held());
    EXPECT_EQ(queue_length(path), 1u) << "the refused participant left its node";
}

// A directory that exists without a permit count (made by an operator or
// another client): the first participants race to set theirs. The one whose
// count lost must be refused, not granted under its own count.
TEST_F(RecipeTest, SemaphoreFirstParticipantsWithDifferentCountsOnAnEmptyDirectory) {
    const auto path = lock_path();
    auto s = connect();
    create_parents(*s, path);
    zklock::testing::create_node(*s, path);  // persistent, no data
    // One session: the three acquires' reads, creates and listings reach the
    // server before any claim, so each reads an empty directory and claims it.
    auto pa = Semaphore(*s, path, 3).permit();
    auto pb = Semaphore(*s, path, 2).permit();
    auto pc = Semaphore(*s, path, 3).permit();
    auto a = locking(pa);
    auto b = locking(pb);
    auto c = locking(pc);
    const auto ea = get_within(a);
    const auto eb = get_within(b);
    const auto ec = get_within(c);
    EXPECT_FALSE(ea) << ea.message();
    EXPECT_EQ(eb, errc::permits_mismatch) << "the participant asking for 2 was let in beside two holders of 3";
    EXPECT_FALSE(pb.is_held());
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(queue_length(path), 2u);
    pa.unlock();
    pc.unlock();
    EXPECT_TRUE(wait_until([&] { return queue_length(path) == 0u; }));
    zklock::testing::delete_node(*s, path);
}

TEST_F(RecipeTest, SemaphoreTimeoutAndCancellationLeaveNoNode) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Semaphore one(*a, path, 1);
    auto held = one.permit();
    held.lock();
    Semaphore other(*b, path, 1);
    auto waiter = other.permit();
    EXPECT_FALSE(waiter.try_lock_for(200ms));
    EXPECT_FALSE(waiter.try_lock());
    EXPECT_EQ(queue_length(path), 1u);
    boost::asio::cancellation_signal cancel;
    std::promise<std::error_code> result;
    waiter.async_lock(boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec) {
        EXPECT_FALSE(waiter.is_held());
        result.set_value(ec);
    }));
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; }));
    cancel.emit(boost::asio::cancellation_type::terminal);
    auto f = result.get_future();
    EXPECT_EQ(get_within(f), std::errc::operation_canceled);
    EXPECT_EQ(queue_length(path), 1u);
}

TEST_F(RecipeTest, PermitsOfEverySemaphoreObjectOnAPathShareOneCount) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Semaphore sem(*a, path, 2);
    Semaphore other(*b, path, 2);
    auto held = sem.permit();
    held.lock();
    Lock first = other.permit();
    first.lock();
    EXPECT_TRUE(first.is_held());
    EXPECT_GT(first.fencing_token(), held.fencing_token());
    // Both permits are taken, one through each Semaphore object: a third waits.
    Lock second = sem.permit();
    EXPECT_FALSE(second.try_lock_for(100ms));
    EXPECT_EQ(queue_length(path), 2u) << "a try that found no permit left its node";
    GrantLog log(2);
    log.holds("held");
    log.holds("first");
    auto f = log.lock(second, "second");
    const auto queue = wait_for_contenders(*a, path, 3, 20s);
    // It watches the two holders' nodes and its own (and its session nothing
    // else): both are still there, so it has been told nothing since it
    // decided to wait, and only the release below can grant it.
    ASSERT_EQ(queue.size(), 3u);
    std::set<std::string> seen;
    EXPECT_TRUE(watches_exactly(*server_, *a,
                                {path + "/" + queue[0].node, path + "/" + queue[1].node, path + "/" + queue[2].node},
                                seen))
        << "the third permit's session watches " << listed(seen);
    EXPECT_FALSE(second.is_held()) << "a third permit was granted beside two holders";
    log.releasing("first");
    first.unlock();
    EXPECT_FALSE(get_within(f)) << "the permit given back did not go to the waiting permit";
    EXPECT_TRUE(second.is_held());
    EXPECT_EQ(log.entries(), (std::vector<std::string>{"-first", "+second"}));
    EXPECT_TRUE(log.crowded().empty()) << log.crowded().front();
    // A count the directory disagrees with fails the Lock too, and says why.
    Lock wrong = Semaphore(*b, path, 3).permit();
    std::error_code ec;
    EXPECT_FALSE(wrong.try_lock(ec));
    EXPECT_EQ(ec, errc::permits_mismatch);
    EXPECT_NE(wrong.failure_detail().find("permits=2"), std::string::npos) << wrong.failure_detail();
}

TEST_F(RecipeTest, SemaphorePermitsHaveTheErrorCodeAndAsyncTryForms) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Semaphore one(*a, path, 1);
    auto held = one.permit();
    held.lock();
    Semaphore other(*b, path, 1);
    auto waiter = other.permit();
    std::error_code ec;
    EXPECT_FALSE(waiter.try_lock(ec));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(waiter.try_lock_for(100ms, ec));
    EXPECT_FALSE(ec) << ec.message();
    // A count the directory disagrees with: an error_code, not an exception.
    Semaphore wrong(*b, path, 3);
    EXPECT_FALSE(wrong.permit().try_lock(ec));
    EXPECT_EQ(ec, errc::permits_mismatch) << ec.message();

    using outcome_type = std::pair<std::error_code, bool>;
    auto outcome = [](std::promise<outcome_type>& p) {
        return [&p](std::error_code e, bool acquired) { p.set_value({e, acquired}); };
    };
    std::promise<outcome_type> busy, timed_out, granted;
    waiter.async_try_lock(outcome(busy));
    auto busy_f = busy.get_future();
    auto [busy_ec, busy_acquired] = get_within(busy_f);
    EXPECT_FALSE(busy_ec) << busy_ec.message();
    EXPECT_FALSE(busy_acquired);
    waiter.async_try_lock_for(100ms, outcome(timed_out));
    auto timed_out_f = timed_out.get_future();
    auto [late_ec, late_acquired] = get_within(timed_out_f);
    EXPECT_FALSE(late_ec) << late_ec.message();
    EXPECT_FALSE(late_acquired);
    EXPECT_EQ(queue_length(path), 1u) << "a try that found no permit left its node";

    waiter.async_try_lock_for(std::chrono::hours(1), outcome(granted));
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; }));
    held.unlock();
    auto granted_f = granted.get_future();
    auto [ok_ec, acquired] = get_within(granted_f);
    EXPECT_FALSE(ok_ec) << ok_ec.message();
    EXPECT_TRUE(acquired);
    EXPECT_TRUE(waiter.is_held());
    EXPECT_GT(waiter.fencing_token(), 0);
}

// ---- SharedMutex -------------------------------------------------------------------

// The (error, value) of an operation awaited through use_future, whose
// std::error_code arrives as a value: a future of a tuple.
template <class A, class B> std::pair<A, B> get_within_pair(std::future<std::tuple<A, B>>&& f) {
    auto t = get_within(f);
    return {std::get<0>(t), std::get<1>(t)};
}

TEST_F(RecipeTest, SharedMutexHasEveryFormOnBothSides) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    SharedMutex writer(*a, path), reader(*b, path);
    writer.lock();
    std::error_code ec;
    EXPECT_FALSE(reader.reader().try_lock(ec));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(reader.reader().try_lock_for(100ms, ec));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(get_within_pair(reader.reader().async_try_lock(boost::asio::use_future)).second);
    EXPECT_FALSE(get_within_pair(reader.reader().async_try_lock_for(100ms, boost::asio::use_future)).second);
    EXPECT_EQ(queue_length(path), 1u) << "a shared try that failed left its node";

    auto unlocked = writer.writer().async_unlock(boost::asio::use_future);
    EXPECT_EQ(get_within(unlocked), std::error_code{});
    const auto [shared_ec, shared] = get_within_pair(reader.reader().async_try_lock(boost::asio::use_future));
    EXPECT_FALSE(shared_ec) << shared_ec.message();
    ASSERT_TRUE(shared);
    EXPECT_FALSE(writer.writer().try_lock(ec));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(get_within_pair(writer.writer().async_try_lock_for(100ms, boost::asio::use_future)).second);
    auto shared_lost = reader.reader().async_wait_lost(boost::asio::use_future);
    auto shared_unlocked = reader.reader().async_unlock(boost::asio::use_future);
    EXPECT_EQ(get_within(shared_unlocked), std::error_code{});
    EXPECT_EQ(get_within(shared_lost), std::error_code{}) << "released first, not lost";
    EXPECT_TRUE(writer.writer().try_lock_until(std::chrono::steady_clock::now() + 10s, ec));
    EXPECT_FALSE(ec) << ec.message();
    auto lost = writer.writer().async_wait_lost(boost::asio::use_future);
    writer.unlock();
    EXPECT_EQ(get_within(lost), std::error_code{});
}

TEST_F(RecipeTest, ReadersOverlapAndWritersExcludeEveryone) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    auto c = connect();
    SharedMutex ra(*a, path), rb(*b, path), wc(*c, path);
    // Each refused try is proven by its own record: it queued (it listed and
    // found its place behind the holders) and left without a grant.
    const auto wc_events = EventRecord::on(wc.writer());
    const auto ra_events = EventRecord::on(ra.reader());
    const auto rb_events = EventRecord::on(rb.writer());
    const auto queued_then_left = [](EventRecord& r, std::size_t position, const char* who) {
        const auto last = r.wait_for_last({lock_event_kind::queued, lock_event_kind::left});
        ASSERT_TRUE(last) << who << " did not queue and leave: " << r.kinds();
        EXPECT_EQ(last->at(0).position, position) << who;
        EXPECT_EQ(last->at(1).reason, errc::timeout) << who;
    };
    {
        std::shared_lock r1(ra);
        std::shared_lock r2(rb);  // does not wait for r1
        EXPECT_TRUE(ra.reader().is_held());
        EXPECT_TRUE(rb.reader().is_held());
        EXPECT_FALSE(wc.try_lock_for(200ms));
        queued_then_left(*wc_events, 2, "the writer beside two readers");
    }
    std::unique_lock w(wc);
    EXPECT_TRUE(wc.writer().is_held());
    EXPECT_GT(wc.writer().fencing_token(), 0);
    EXPECT_FALSE(ra.try_lock_shared_for(200ms));
    queued_then_left(*ra_events, 1, "a reader beside the writer");
    EXPECT_FALSE(rb.try_lock_for(200ms));
    queued_then_left(*rb_events, 1, "a second writer");
    const auto queue = wc.contenders();
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_FALSE(queue[0].shared);
}

TEST_F(RecipeTest, WriterQueuedBehindReadersIsServedBeforeLaterReaders) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    auto c = connect();
    SharedMutex early(*a, path), writer(*b, path), late(*c, path);
    early.lock_shared();
    auto wgrant = writer.writer().async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return writer.writer().queue_position() == 1u; }));
    auto rgrant = late.reader().async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return late.reader().queue_position() == 2u; }));
    EXPECT_FALSE(late.reader().is_held()) << "a reader overtook a queued writer";
    wait_for_watcher(*c, writer.writer().node_path());  // so the writer's release is a wake-up
    early.unlock_shared();
    EXPECT_FALSE(get_within(wgrant));
    EXPECT_TRUE(writer.writer().is_held());
    EXPECT_FALSE(late.reader().is_held());
    writer.unlock();
    EXPECT_FALSE(get_within(rgrant));
    EXPECT_TRUE(late.reader().is_held());
    EXPECT_EQ(late.reader().stats().wakeups, 1u);
    late.unlock_shared();
}

TEST_F(RecipeTest, CancelledSharedAcquireLeavesNoNode) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    SharedMutex w(*a, path), r(*b, path);
    w.lock();
    boost::asio::cancellation_signal cancel;
    std::promise<std::error_code> result;
    r.reader().async_lock(boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec) { result.set_value(ec); }));
    ASSERT_TRUE(wait_until([&] { return r.reader().queue_position() == 1u; }));
    cancel.emit(boost::asio::cancellation_type::terminal);
    auto f = result.get_future();
    EXPECT_EQ(get_within(f), std::errc::operation_canceled);
    EXPECT_EQ(queue_length(path), 1u);
    w.unlock();
}

// ---- LeaderElection ------------------------------------------------------------------

TEST_F(RecipeTest, OneLeaderAndResignHandsOverInArrivalOrder) {
    const auto path = lock_path();
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<std::unique_ptr<LeaderElection>> members;
    std::vector<std::future<std::tuple<std::error_code, Leadership>>> terms;
    for (int i = 0; i < 3; ++i) {
        sessions.push_back(connect());
        members.push_back(std::make_unique<LeaderElection>(*sessions.back(), path, "p" + std::to_string(i)));
        terms.push_back(members.back()->async_campaign(boost::asio::use_future));
        ASSERT_TRUE(wait_until([&] { return members.back()->queue_position().has_value(); }));
    }
    auto [ec0, t0] = get_within(terms[0]);
    EXPECT_FALSE(ec0);
    EXPECT_EQ(t0.participant_id, "p0");
    const auto current = members[2]->leader();
    ASSERT_TRUE(current.has_value());
    EXPECT_EQ(current->participant_id, "p0");
    EXPECT_EQ(current->epoch, t0.epoch);
    EXPECT_FALSE(members[1]->is_leader());
    members[0]->resign();
    auto [ec1, t1] = get_within(terms[1]);
    EXPECT_EQ(t1.participant_id, "p1");
    EXPECT_GT(t1.epoch, t0.epoch);
    EXPECT_FALSE(members[0]->is_leader());
    EXPECT_FALSE(members[2]->is_leader());
    members[1]->resign();
    auto [ec2, t2] = get_within(terms[2]);
    EXPECT_GT(t2.epoch, t1.epoch);
    members[2]->resign();
}

TEST_F(RecipeTest, ObserversSeeEveryLeaderChange) {
    const auto path = lock_path();
    auto s = connect();
    auto o = connect();
    LeaderElection member(*s, path, "worker-1");
    LeaderElection observer(*o, path, "observer");
    // The wait has looked once it watches for the election to appear (an
    // exists watch on its path), before anybody campaigns: a wait that
    // completed on that look would report nobody, which the check of its
    // result after the campaign refuses.
    std::set<std::string> seen;
    auto first = observer.async_wait_leader_change(std::nullopt, boost::asio::use_future);
    EXPECT_TRUE(watches_exactly(*server_, *o, {path}, seen)) << "the observer watches " << listed(seen);
    EXPECT_EQ(first.wait_for(0ms), std::future_status::timeout) << "reported a leader while nobody leads";
    member.campaign();
    auto [ec, info] = get_within(first);
    EXPECT_FALSE(ec);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->participant_id, "worker-1");
    // It has read the leader once it watches the leader's node (and only
    // that: an observer watches nothing else), before the resign: a wait that
    // completed on that read would report the same leader, which the check of
    // its result after the resign refuses.
    auto next = observer.async_wait_leader_change(info, boost::asio::use_future);
    EXPECT_TRUE(watches_exactly(*server_, *o, {path + "/" + info->node}, seen))
        << "the observer watches " << listed(seen);
    EXPECT_EQ(next.wait_for(0ms), std::future_status::timeout) << "reported a change that did not happen";
    member.resign();
    auto [ec2, info2] = get_within(next);
    EXPECT_FALSE(ec2);
    EXPECT_FALSE(info2.has_value()) << "nobody leads after the only member resigned";
    EXPECT_FALSE(observer.is_leader());
}

TEST_F(RecipeTest, AsyncResignCompletesWhenTheNextParticipantCanLead) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    auto c = connect();
    LeaderElection leader(*a, path, "a"), next(*b, path, "b"), waiting(*c, path, "c");
    const auto term = leader.campaign();
    auto next_term = next.async_campaign(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; }));
    auto waiting_term = waiting.async_campaign(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 3; }));

    // Not leading: the pending campaign is given up, the resign says not_held.
    auto gave_up = waiting.async_resign(boost::asio::use_future);
    EXPECT_EQ(get_within(gave_up), errc::not_held);
    EXPECT_EQ(std::get<0>(get_within(waiting_term)), std::errc::operation_canceled);
    EXPECT_EQ(queue_length(path), 2u);

    auto resigned = leader.async_resign(boost::asio::use_future);
    EXPECT_EQ(get_within(resigned), std::error_code{});
    EXPECT_FALSE(leader.is_leader());
    const auto [ec, t2] = get_within(next_term);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_GT(t2.epoch, term.epoch);
    EXPECT_EQ(queue_length(path), 1u);
    next.resign();
}

TEST_F(RecipeTest, OnLostStillReportsTheTermAfterAResign) {
    const auto path = lock_path();
    auto a = connect();
    auto observer = connect();
    LeaderElection leader(*a, path, "a");
    std::promise<std::error_code> lost;
    leader.on_lost([&](std::error_code ec) { lost.set_value(ec); });
    leader.campaign();
    leader.resign();
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 0; }));
    leader.campaign();
    zklock::testing::delete_node(*observer, leader.node_path());
    auto f = lost.get_future();
    EXPECT_EQ(get_within(f), errc::node_deleted);
}

TEST_F(RecipeTest, ReconnectWithinTheSessionTimeoutKeepsTheLeader) {
    own_server(20s);  // it restarts the server, within a session timeout
    const auto path = lock_path();
    auto a = connect(20s);
    auto b = connect(20s);
    EventLog log(*a);
    EventLog follower_log(*b);
    LeaderElection leader(*a, path, "a");
    LeaderElection follower(*b, path, "b");
    std::atomic<int> losses{0};
    leader.on_lost([&](std::error_code) { ++losses; });
    const auto term = leader.campaign();
    // The follower's term as it records it: its grant notes whether the
    // leader had begun to resign (which the test notes before it does).
    struct record {
        std::atomic<bool> resigning{false};
        std::atomic<bool> granted_before_the_resign{false};
        std::promise<std::pair<std::error_code, Leadership>> granted;
    };
    auto r = std::make_shared<record>();  // the completion may run after the test gave up
    follower.async_campaign([r](std::error_code ec, Leadership t) {
        if (!r->resigning) r->granted_before_the_resign = true;
        r->granted.set_value({ec, std::move(t)});
    });
    auto second = r->granted.get_future();
    ASSERT_TRUE(wait_until([&] { return follower.queue_position() == 1u; }));
    server_->stop();
    ASSERT_TRUE(log.wait_for(session_event::suspended));
    server_->restart();
    ASSERT_TRUE(log.wait_for(session_event::reconnected));
    ASSERT_TRUE(follower_log.wait_for(session_event::reconnected));  // its leader() below needs the session back
    EXPECT_TRUE(leader.is_leader());
    EXPECT_EQ(losses, 0);
    // The restarted server holds the follower's watches on the leader's node
    // and on its release mark, and on its own node (re-armed by its client, or
    // set anew after a listing that found the leader ahead): the node is still there and the
    // mark absent, so nothing the follower was told since it last decided to
    // wait can have made it the leader.
    std::set<std::string> seen;
    EXPECT_TRUE(watches_exactly(*server_, *b,
                                {leader.node_path(), leader.node_path() + ".released", follower.node_path()}, seen))
        << "the follower watches " << listed(seen);
    EXPECT_EQ(second.wait_for(0ms), std::future_status::timeout) << "a second leader after a reconnect";
    const auto now = follower.leader();
    ASSERT_TRUE(now.has_value());
    EXPECT_EQ(now->epoch, term.epoch);
    r->resigning = true;
    leader.resign();
    auto [ec, t2] = get_within(second);
    EXPECT_FALSE(ec);
    EXPECT_FALSE(r->granted_before_the_resign) << "a second leader after a reconnect";
    EXPECT_GT(t2.epoch, term.epoch);
    follower.resign();
}

TEST_F(RecipeTest, FiveParticipantsUnderLeaderExpiryNeverShareAnEpoch) {
    const auto path = lock_path();
    constexpr int participants = 5;
    struct Resource {
        std::mutex m;
        std::int64_t highest = 0;
        std::vector<std::int64_t> term_epochs;
        int stale_rejected = 0;
    } res;
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<std::unique_ptr<LeaderElection>> members;
    for (int i = 0; i < participants; ++i) {
        sessions.push_back(connect(1000ms));
        members.push_back(std::make_unique<LeaderElection>(*sessions.back(), path, "p" + std::to_string(i)));
    }
    std::stop_source stop_all;
    std::vector<std::thread> threads;
    struct joiner {
        std::stop_source& stop;
        std::vector<std::thread>& threads;
        ~joiner() {
            stop.request_stop();
            for (auto& t : threads)
                if (t.joinable()) t.join();
        }
    } join_at_exit{stop_all, threads};
    for (int i = 0; i < participants; ++i) {
        threads.emplace_back([&, i] {
            members[static_cast<std::size_t>(i)]->run_as_leader(
                [&](std::stop_token stop, const Leadership& term) {
                    {
                        std::lock_guard lk(res.m);
                        if (term.epoch <= res.highest) ++res.stale_rejected;
                        else res.highest = term.epoch;
                        res.term_epochs.push_back(term.epoch);
                    }
                    std::mutex wm;
                    std::condition_variable cv;
                    std::stop_callback wake(stop, [&] { cv.notify_all(); });
                    std::unique_lock lk(wm);
                    cv.wait(lk, [&] { return stop.stop_requested(); });
                },
                {}, stop_all.get_token());
        });
    }
    // Expire the leader's session three times; each time a new leader with a higher epoch takes over.
    auto observer_session = connect();
    LeaderElection observer(*observer_session, path, "observer");
    std::optional<LeaderInfo> current;
    for (int round = 0; round < 3; ++round) {
        auto change = observer.async_wait_leader_change(current, boost::asio::use_future);
        // Failover within the session timeout (1 s) plus one second.
        auto [ec, info] = get_within(change, round == 0 ? 15s : 2s);
        ASSERT_FALSE(ec) << ec.message();
        if (!info) {
            --round;
            current = info;
            continue;
        }
        if (current) {
            EXPECT_GT(info->epoch, current->epoch);
        }
        current = info;
        // The observer sees the new leader's node first in line before that
        // participant learns it leads: expire it only once its term has begun.
        ASSERT_TRUE(wait_until([&] {
            std::lock_guard lk(res.m);
            return std::find(res.term_epochs.begin(), res.term_epochs.end(), info->epoch) != res.term_epochs.end();
        })) << info->participant_id << " did not begin its term";
        const int idx = std::stoi(info->participant_id.substr(1));
        zklock::testing::expire_session(*sessions[static_cast<std::size_t>(idx)]);
    }
    stop_all.request_stop();
    for (auto& t : threads) t.join();
    std::lock_guard lk(res.m);
    EXPECT_EQ(res.stale_rejected, 0) << "a term started with an epoch not above every earlier term's";
    EXPECT_GE(res.term_epochs.size(), 3u);
    EXPECT_TRUE(std::is_sorted(res.term_epochs.begin(), res.term_epochs.end()));
}

TEST_F(RecipeTest, CancelledCampaignLeavesNoNode) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    LeaderElection leader(*a, path, "a");
    LeaderElection other(*b, path, "b");
    leader.campaign();
    boost::asio::cancellation_signal cancel;
    std::promise<std::error_code> result;
    other.async_campaign(boost::asio::bind_cancellation_slot(
        cancel.slot(), [&](std::error_code ec, Leadership) { result.set_value(ec); }));
    ASSERT_TRUE(wait_until([&] { return other.queue_position() == 1u; }));
    cancel.emit(boost::asio::cancellation_type::terminal);
    auto f = result.get_future();
    EXPECT_EQ(get_within(f), std::errc::operation_canceled);
    EXPECT_EQ(queue_length(path), 1u);
    leader.resign();
}

TEST_F(RecipeTest, SemaphorePermitFreedOutOfOrderGoesToTheNextWaiter) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    Semaphore holders(*s1, path, 2);
    Semaphore waiters(*s2, path, 2);
    auto first = holders.permit();
    auto second = holders.permit();
    first.lock();
    second.lock();
    auto waiter = waiters.permit();
    auto granted = locking(waiter);
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 3; }));
    second.unlock();  // the later holder leaves first; `first` keeps its permit
    const auto ec = get_within(granted);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(waiter.is_held());
    EXPECT_TRUE(first.is_held());
}

TEST_F(RecipeTest, ResignWhileCampaigningLeavesTheLine) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    LeaderElection leader(*a, path, "a");
    LeaderElection other(*b, path, "b");
    leader.campaign();
    auto campaign = other.async_campaign(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; }));
    other.resign();
    auto [ec, term] = get_within(campaign);
    EXPECT_EQ(ec, std::errc::operation_canceled);
    EXPECT_EQ(queue_length(path), 1u);
    leader.resign();
}
