#include "proof_support.hpp"
#include "support.hpp"

#include <zklock/diagnostics.hpp>
#include <zklock/testing/faults.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

using namespace zklock;
using namespace zklock::test;

class MutexTest : public ServerTest {
protected:
    std::size_t queue_length(const std::string& path) {
        auto observer = connect();
        return list_contenders(*observer, path).size();
    }

    std::uint64_t handoff_listings(Session& observer, std::vector<std::unique_ptr<Session>>& sessions,
                                   const std::string& path, const MutexOptions& o);
};

TEST_F(MutexTest, UncontendedLockAndUnlock) {
    auto s = connect();
    const auto path = lock_path();
    Mutex m(*s, path);
    EXPECT_FALSE(m.is_held());
    m.lock();
    EXPECT_TRUE(m.is_held());
    EXPECT_GT(m.fencing_token(), 0);
    EXPECT_EQ(m.queue_position(), 0u);
    EXPECT_EQ(m.node_path().rfind(path + "/_c_", 0), 0u) << m.node_path();
    const auto queue = m.contenders();
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(path + "/" + queue[0].node, m.node_path());
    EXPECT_EQ(queue[0].fencing_token, m.fencing_token());
    EXPECT_EQ(queue[0].owner_session, s->session_id());
    EXPECT_EQ(m.stats().acquisitions, 1u);
    m.unlock();
    EXPECT_FALSE(m.is_held());
    EXPECT_EQ(m.fencing_token(), 0);
}

TEST_F(MutexTest, AsyncUnlockConfirmsTheDelete) {
    auto s = connect();
    const auto path = lock_path();
    Mutex m(*s, path);
    m.lock();
    auto done = m.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(done)) << "delete not confirmed";
    EXPECT_EQ(queue_length(path), 0u);
    auto again = m.async_unlock(boost::asio::use_future);
    EXPECT_EQ(get_within(again), errc::not_held);
}

TEST_F(MutexTest, MutualExclusionAcrossEightSessionsCheckedByFencingTokens) {
    const auto path = lock_path();
    constexpr int clients = 8;
    constexpr int rounds = 6;
    struct Resource {
        std::mutex m;
        int inside = 0;
        std::int64_t highest_token = 0;
        std::vector<std::int64_t> tokens;
        int violations = 0;
    } resource;
    auto enter = [&](std::int64_t token) {
        std::lock_guard lk(resource.m);
        if (++resource.inside != 1) ++resource.violations;
        if (token <= resource.highest_token) ++resource.violations;  // a stale holder
        resource.highest_token = token;
        resource.tokens.push_back(token);
    };
    auto leave = [&] {
        std::lock_guard lk(resource.m);
        --resource.inside;
    };
    std::vector<std::thread> threads;
    std::atomic<int> errors{0};
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&] {
            try {
                auto s = connect();
                Mutex m(*s, path);
                for (int r = 0; r < rounds; ++r) {
                    std::unique_lock lk(m);
                    enter(m.fencing_token());
                    std::this_thread::yield();
                    leave();
                }
            } catch (const std::exception& e) {
                ADD_FAILURE() << e.what();
                ++errors;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(errors, 0);
    EXPECT_EQ(resource.violations, 0);
    EXPECT_EQ(resource.tokens.size(), static_cast<std::size_t>(clients * rounds));
    EXPECT_TRUE(std::is_sorted(resource.tokens.begin(), resource.tokens.end()));
    EXPECT_EQ(std::set<std::int64_t>(resource.tokens.begin(), resource.tokens.end()).size(), resource.tokens.size());
}

TEST_F(MutexTest, GrantsFollowArrivalOrder) {
    const auto path = lock_path();
    auto holder_session = connect();
    Mutex holder(*holder_session, path);
    holder.lock();

    constexpr int waiters = 5;
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<std::unique_ptr<Mutex>> mutexes;
    std::mutex order_mutex;
    std::vector<int> order;
    std::promise<void> all_granted;
    for (int i = 0; i < waiters; ++i) {
        sessions.push_back(connect());
        mutexes.push_back(std::make_unique<Mutex>(*sessions.back(), path));
        mutexes.back()->async_lock([&, i](std::error_code ec) {
            EXPECT_FALSE(ec) << ec.message();
            std::lock_guard lk(order_mutex);
            order.push_back(i);
            mutexes[static_cast<std::size_t>(i)]->unlock();
            if (order.size() == waiters) all_granted.set_value();
        });
        // Wait until this waiter is queued before the next one arrives.
        ASSERT_TRUE(wait_until([&] { return mutexes.back()->queue_position().has_value(); }));
        EXPECT_EQ(mutexes.back()->queue_position(), static_cast<std::size_t>(i + 1));
    }
    // Each waiter watches the one just ahead of it before the chain starts: a
    // node already gone when its waiter asks to watch it is no wake-up.
    for (int i = 0; i < waiters; ++i)
        wait_for_watcher(*sessions[static_cast<std::size_t>(i)],
                         i == 0 ? holder.node_path() : mutexes[static_cast<std::size_t>(i - 1)]->node_path());
    holder.unlock();
    auto f = all_granted.get_future();
    get_within(f, 15s);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
    for (auto& m : mutexes) EXPECT_EQ(m->stats().wakeups, 1u) << "woken more than once";
}

// What the server received on `session`'s connection so far: the `recved`
// count of its line in a `cons` answer (requests and pings), 0 when none.
std::uint64_t requests_received(zklock::testing::ZooKeeperServer& server, const Session& session) {
    std::ostringstream sid;
    sid << "sid=0x" << std::hex << session.session_id();
    const auto cons = server.four_letter_word("cons", 5s);
    std::istringstream lines(cons);
    for (std::string line; std::getline(lines, line);) {
        const auto at = line.find("recved=");
        if (line.find(sid.str() + ",") == std::string::npos || at == std::string::npos) continue;
        return std::stoull(line.substr(at + 7));
    }
    return 0;
}

// Many contenders of one session on one lock, all arriving while the first's
// listing is outstanding: they share the listings (fsm/listing_batches.hpp),
// two in all instead of one each; each decides on a listing that holds its
// own node (one attempt each, no node made twice), and grants keep arrival order.
TEST_F(MutexTest, ContendersOfOneSessionShareTheirListingsAndKeepArrivalOrder) {
    const auto path = lock_path();
    auto holder_session = connect();
    Mutex holder(*holder_session, path);
    holder.lock();
    // The session runs on this test's one thread: the handler below asks for
    // every acquire before the session can read any answer.
    boost::asio::io_context ioc;
    auto work = boost::asio::make_work_guard(ioc);
    std::thread runner([&] { ioc.run(); });
    Session s(ioc.get_executor(), options());
    constexpr std::size_t n = 30;
    std::vector<std::unique_ptr<Mutex>> mutexes;
    std::vector<std::size_t> order;  // the session's thread's
    std::promise<void> all_granted;
    {
        auto connected = s.async_connect(boost::asio::use_future);
        ASSERT_FALSE(get_within(connected));
        for (std::size_t i = 0; i < n; ++i) mutexes.push_back(std::make_unique<Mutex>(s, path));
        const auto before = requests_received(*server_, s);
        ASSERT_GT(before, 0u);
        boost::asio::post(ioc, [&] {
            for (std::size_t i = 0; i < n; ++i)
                mutexes[i]->async_lock([&, i](std::error_code ec) {
                    EXPECT_FALSE(ec) << ec.message();
                    order.push_back(i);
                    mutexes[i]->async_unlock([](std::error_code) {});
                    if (order.size() == n) all_granted.set_value();
                });
        });
        ASSERT_TRUE(wait_until([&] {
            return std::all_of(mutexes.begin(), mutexes.end(), [](const auto& m) { return m->queue_position().has_value(); });
        }));
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(mutexes[i]->queue_position(), i + 1);
            EXPECT_EQ(mutexes[i]->stats().attempts, 1u) << "waiter " << i << " decided on a listing without its node";
        }
        // The last waiter watches the node ahead of it: the session's requests
        // before that watch have reached the server (they run in order).
        wait_for_watcher(s, mutexes[n - 2]->node_path());
        // Per waiter a create, a watch of the node ahead, one of its release
        // mark and one of its own node; the directory's create, once; and the
        // two listings (and a probe or two of the session's). A listing each
        // would be n more.
        constexpr std::uint64_t expected = 4 * n + 1 + 2;
        EXPECT_TRUE(wait_until([&] { return requests_received(*server_, s) - before >= expected; }));
        const auto received = requests_received(*server_, s) - before;
        EXPECT_LT(received, expected + n / 2) << "the session sent more than two listings";
        holder.unlock();
        auto f = all_granted.get_future();
        get_within(f, 20s);
    }
    std::vector<std::size_t> arrival(n);
    std::iota(arrival.begin(), arrival.end(), std::size_t{0});
    EXPECT_EQ(order, arrival);
    mutexes.clear();
    s.close();
    work.reset();
    runner.join();
}

// describe_internals: what a Session and each place in a queue are doing, in
// words, read on the session's strand; a strand held too long, or a closed
// session, is said instead of waited for.
TEST_F(MutexTest, DescribeInternalsSaysWhatTheSessionAndEachPlaceInTheQueueAreDoing) {
    const auto path = lock_path();
    auto s = connect();
    Mutex holder(*s, path), waiter(*s, path);
    holder.lock();
    auto granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }));
    wait_for_watcher(*s, holder.node_path());

    const auto session_text = describe_internals(*s);
    EXPECT_NE(session_text.find("state=connected"), std::string::npos) << session_text;
    EXPECT_NE(session_text.find("id=" + std::to_string(s->session_id())), std::string::npos) << session_text;
    const auto holder_node = holder.node_path().substr(path.size() + 1);
    const auto holder_text = describe_internals(holder);
    EXPECT_NE(holder_text.find("phase=held"), std::string::npos) << holder_text;
    EXPECT_NE(holder_text.find("node=" + holder_node), std::string::npos) << holder_text;
    const auto waiter_text = describe_internals(waiter);
    EXPECT_NE(waiter_text.find("phase=acquiring"), std::string::npos) << waiter_text;
    EXPECT_NE(waiter_text.find("watching=[" + holder_node + "]"), std::string::npos) << waiter_text;
    {
        zklock::testing::SessionFreeze freeze(*s);
        const auto busy = describe_internals(*s, 100ms);
        EXPECT_NE(busy.find("strand is busy"), std::string::npos) << busy;
    }
    holder.unlock();
    EXPECT_FALSE(get_within(granted));
    waiter.unlock();
    s->close();
    EXPECT_EQ(describe_internals(*s), "session closed");
}

// A holder, then `first` behind it, a waiter that is cancelled, and `last`:
// the cancelled waiter leaves without holding, so `last` lists again; then
// the holder and `first` release in turn. Returns the listings `last` made
// for its handoff from `first`, which was not the only node ahead of it at
// its last listing (the holder was too).
std::uint64_t MutexTest::handoff_listings(Session& observer, std::vector<std::unique_ptr<Session>>& sessions,
                                          const std::string& path, const MutexOptions& o) {
    Mutex holder(*sessions[0], path, o);
    holder.lock();
    Mutex first(*sessions[1], path, o), cancelled(*sessions[2], path, o), last(*sessions[3], path, o);
    const Session& last_session = *sessions[3];
    auto first_granted = first.async_lock(boost::asio::use_future);
    wait_for_contenders(observer, path, 2, 20s);
    boost::asio::cancellation_signal cancel;
    auto cancelled_result = cancelled.async_lock(boost::asio::bind_cancellation_slot(cancel.slot(), boost::asio::use_future));
    wait_for_contenders(observer, path, 3, 20s);
    std::promise<void> relisted;
    std::atomic<bool> queued{false};
    last.on_queue_position([&](std::size_t p) {
        if (p == 3) queued = true;
        else if (p == 2 && queued.exchange(false)) relisted.set_value();
    });
    auto last_granted = last.async_lock(boost::asio::use_future);
    const auto queue = wait_for_contenders(observer, path, 4, 20s);
    // Its watch is set: the deletion below is a notification, not a node
    // already gone when `last` asks to watch it.
    wait_for_watcher(last_session, path + "/" + queue[2].node);

    // The waiter just ahead of `last` leaves without ever holding: that proves
    // nothing about the nodes ahead of it, so `last` lists again (its place
    // becomes 2) and keeps waiting.
    boost::asio::post(sessions[2]->get_executor(), [&] { cancel.emit(boost::asio::cancellation_type::terminal); });
    EXPECT_EQ(get_within(cancelled_result), std::errc::operation_canceled);
    auto relisted_f = relisted.get_future();
    EXPECT_EQ(relisted_f.wait_for(20s), std::future_status::ready) << "the waiter behind the cancelled one did not list again";
    EXPECT_FALSE(last.is_held());
    const auto last_before = last.stats().attempts;
    wait_for_watcher(*sessions[1], holder.node_path());
    wait_for_watcher(last_session, first.node_path());

    holder.unlock();
    EXPECT_FALSE(get_within(first_granted));
    EXPECT_TRUE(first.is_held());
    first.unlock();
    EXPECT_FALSE(get_within(last_granted));
    EXPECT_TRUE(last.is_held());
    last.unlock();
    EXPECT_EQ(first.stats().wakeups, 1u);
    EXPECT_EQ(last.stats().wakeups, 2u);  // the cancelled waiter's deletion, then `first`'s release
    return last.stats().attempts - last_before;
}

TEST_F(MutexTest, AMarkedReleaseHandsOverWithoutAListingAndACancelledWaiterProvesNothing) {
    auto observer = connect();
    std::vector<std::unique_ptr<Session>> sessions;
    for (int i = 0; i < 4; ++i) sessions.push_back(connect());
    // A release marks its node in the delete's transaction: each successor
    // holds on the mark without listing the queue again.
    EXPECT_EQ(handoff_listings(*observer, sessions, lock_path(), MutexOptions{}), 0u)
        << "a handoff from a marking holder listed the queue";
    // Without the mark, each woken successor lists.
    MutexOptions unmarked;
    unmarked.mark_release = false;
    EXPECT_EQ(handoff_listings(*observer, sessions, lock_path(), unmarked), 1u);
}

TEST_F(MutexTest, AReleasedSiblingSomebodyLeftNeitherGrantsTheWaiterNorBlocksTheRelease) {
    // The release proof is a `.released` sibling the release creates and
    // deletes in its transaction; one left there by somebody else proves
    // nothing to the waiter, and the release goes without it.
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    auto c = connect();
    Mutex before(*c, path), holder(*a, path), waiter(*b, path);
    // Granted on its predecessor's release, not by a listing of its own, the
    // holder cannot know who queued behind it: its release carries the proof.
    before.lock();
    auto held = holder.async_lock(boost::asio::use_future);
    wait_for_contenders(*a, path, 2, 20s);
    before.unlock();
    EXPECT_FALSE(get_within(held));
    const auto sibling = holder.node_path() + ".released";
    zklock::testing::create_node(*a, sibling);
    GrantLog log;
    log.holds("holder");
    auto granted = log.lock(waiter, "waiter");
    // The waiter's node as the server has it: waiter.node_path() may still be
    // empty, until the waiter has read its create's reply.
    const auto queue = wait_for_contenders(*a, path, 2, 20s);
    ASSERT_EQ(queue.size(), 2u);
    const auto waiter_node = path + "/" + queue[1].node;
    // Its exists() found the sibling there and it watches the holder's node
    // (and its own): it looked at both and decided to wait. Both are still
    // there, so it has been told nothing since that could grant it before the
    // release.
    std::set<std::string> seen;
    EXPECT_TRUE(watches_exactly(*server_, *b, {sibling, holder.node_path(), waiter_node}, seen))
        << "the waiter watches " << listed(seen) << ", not " << listed({sibling, holder.node_path(), waiter_node});
    EXPECT_EQ(granted.wait_for(0s), std::future_status::timeout) << "granted while the holder holds";
    log.releasing("holder");
    auto released = holder.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released)) << "the release failed";
    EXPECT_FALSE(get_within(granted));
    EXPECT_TRUE(waiter.is_held());
    EXPECT_EQ(log.entries(), (std::vector<std::string>{"-holder", "+waiter"})) << "granted while the holder holds";
    waiter.unlock();
    zklock::testing::delete_node(*a, sibling);
}

TEST_F(MutexTest, AWaiterWatchesItsPredecessorsReleasedSiblingOnlyWhileItMayStillCome) {
    // A holder whose node somebody deletes leaves without a release: its
    // waiter holds on the node's deletion, and the server keeps no watch of
    // the waiter's on the sibling that will never be created.
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    auto operator_session = connect();
    Mutex holder(*a, path), waiter(*b, path);
    holder.lock();
    const auto sibling = holder.node_path() + ".released";
    auto granted = waiter.async_lock(boost::asio::use_future);
    wait_for_watcher(*b, sibling);
    zklock::testing::delete_node(*operator_session, holder.node_path());
    EXPECT_FALSE(get_within(granted, 20s));
    EXPECT_TRUE(waiter.is_held());
    EXPECT_TRUE(wait_until([&] { return !watches(server_->four_letter_word("wchp", 5s), sibling, b->session_id()); }))
        << "the waiter still watches " << sibling;
    waiter.unlock();
}

TEST_F(MutexTest, AReleaseWhoseNodeMayNotBeWrittenIsDeletedWithoutTheMark) {
    // Nodes anyone may create, delete and read, but nobody may write: the
    // mark's write is refused, so each release deletes its node without it.
    MutexOptions o;
    o.acl = acl_list{world_acl(perms::create | perms::remove | perms::read)};
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    auto c = connect();
    Mutex holder(*a, path, o), first(*b, path, o), last(*c, path, o);
    holder.lock();
    auto first_granted = first.async_lock(boost::asio::use_future);
    wait_for_contenders(*a, path, 2, 20s);
    auto last_granted = last.async_lock(boost::asio::use_future);
    wait_for_contenders(*a, path, 3, 20s);
    wait_for_watcher(*c, first.node_path());  // `last` listed with two nodes ahead
    auto released = holder.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released)) << "the release failed";
    EXPECT_FALSE(get_within(first_granted));
    auto released_too = first.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released_too)) << "the release failed";
    EXPECT_FALSE(get_within(last_granted));
    EXPECT_TRUE(last.is_held());
    // `last` saw two nodes ahead; `first` could not mark its node, but its
    // release still created its `.released` sibling (the directory lets anyone
    // create), which proved it: `last` held without listing again.
    EXPECT_EQ(last.stats().attempts, 1u);
    EXPECT_EQ(queue_length(path), 1u);
    last.unlock();
}

TEST_F(MutexTest, TryLockForTimesOutAndLeavesNoNode) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Mutex holder(*a, path);
    Mutex waiter(*b, path);
    holder.lock();
    EXPECT_FALSE(waiter.try_lock_for(300ms));
    EXPECT_FALSE(waiter.is_held());
    EXPECT_TRUE(waiter.node_path().empty());
    EXPECT_EQ(queue_length(path), 1u) << "the timed-out waiter left its node";
    holder.unlock();
    EXPECT_TRUE(waiter.try_lock_for(5s));
    waiter.unlock();
}

TEST_F(MutexTest, TryLockDoesNotWait) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Mutex holder(*a, path);
    Mutex other(*b, path);
    EXPECT_TRUE(holder.try_lock());
    EXPECT_FALSE(other.try_lock());
    EXPECT_EQ(queue_length(path), 1u);
    holder.unlock();
}

TEST_F(MutexTest, CancelledAsyncLockLeavesNoNode) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Mutex holder(*a, path);
    Mutex waiter(*b, path);
    holder.lock();
    boost::asio::cancellation_signal cancel;
    std::promise<std::error_code> result;
    waiter.async_lock(boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec) { result.set_value(ec); }));
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }));
    EXPECT_EQ(queue_length(path), 2u);
    cancel.emit(boost::asio::cancellation_type::terminal);
    auto f = result.get_future();
    EXPECT_EQ(get_within(f), std::errc::operation_canceled);
    EXPECT_FALSE(waiter.is_held());
    EXPECT_EQ(queue_length(path), 1u) << "the cancelled waiter left its node";
    holder.unlock();
}

TEST_F(MutexTest, AsyncTryLockForReportsNotAcquired) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Mutex holder(*a, path);
    Mutex waiter(*b, path);
    holder.lock();
    auto f = waiter.async_try_lock_for(200ms, boost::asio::use_future);
    const auto [ec, acquired] = get_within(f);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(acquired);
    EXPECT_EQ(queue_length(path), 1u);
    holder.unlock();
}

TEST_F(MutexTest, UnlockWhileTheServerIsPausedStillDeletesTheNode) {
    own_server(20s);  // it restarts the server, within a session timeout
    const auto path = lock_path();
    auto s = connect(20s);
    EventLog log(*s);
    Mutex m(*s, path);
    m.lock();
    server_->pause();
    ASSERT_TRUE(log.wait_for(session_event::suspended));
    m.unlock();  // not connected: the session owns the delete
    EXPECT_FALSE(m.is_held());
    server_->resume();
    // The pause (2/3 of the session timeout) ends well inside the session timeout:
    // the same session comes back and the session retries the delete it owns.
    ASSERT_TRUE(log.wait_for(session_event::reconnected));
    EXPECT_EQ(log.count(session_event::expired), 0u);
    EXPECT_TRUE(wait_until([&] { return queue_length(path) == 0; }));
}

TEST_F(MutexTest, UnlockWhileTheServerRestartsStillDeletesTheNode) {
    own_server(20s);  // it restarts the server, within a session timeout
    const auto path = lock_path();
    auto s = connect(20s);
    EventLog log(*s);
    Mutex m(*s, path);
    m.lock();
    server_->stop();
    ASSERT_TRUE(log.wait_for(session_event::suspended));
    m.unlock();
    server_->restart();
    ASSERT_TRUE(log.wait_for(session_event::reconnected));
    EXPECT_TRUE(wait_until([&] { return queue_length(path) == 0; }));
}

TEST_F(MutexTest, ExpiredHolderIsToldAndTheNextWaiterAcquires) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Mutex holder(*a, path);
    Mutex waiter(*b, path);
    std::promise<std::error_code> lost;
    holder.on_lost([&](std::error_code ec) { lost.set_value(ec); });
    holder.lock();
    auto lost_wait = holder.async_wait_lost(boost::asio::use_future);
    auto granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }));
    zklock::testing::expire_session(*a);
    auto lf = lost.get_future();
    EXPECT_EQ(get_within(lf), errc::session_expired);
    EXPECT_EQ(get_within(lost_wait), errc::session_expired);
    EXPECT_FALSE(holder.is_held());
    EXPECT_FALSE(get_within(granted));
    EXPECT_TRUE(waiter.is_held());
    waiter.unlock();
}

TEST_F(MutexTest, NodeDeletedBySomeoneElseIsReportedAsLoss) {
    const auto path = lock_path();
    auto a = connect();
    auto admin = connect();
    Mutex m(*a, path);
    m.lock();
    auto lost = m.async_wait_lost(boost::asio::use_future);
    zklock::testing::delete_node(*admin, m.node_path());
    EXPECT_EQ(get_within(lost), errc::node_deleted);
    EXPECT_FALSE(m.is_held());
    EXPECT_GT(m.stats().total_hold.count(), 0) << "a lost hold's time is counted too";
}

TEST_F(MutexTest, NodeDeletedOnceTheHolderWatchesItIsReportedAsLoss) {
    // The holder watches its own node a moment into the hold (a short hold
    // never pays for the watch); the test above deletes the node at once, this
    // one once the server counts the watch.
    const auto path = lock_path();
    auto a = connect();
    auto admin = connect();
    const auto watches = [&] {
        const auto mntr = server_->four_letter_word("mntr");
        const auto at = mntr.find("zk_watch_count");
        return at == std::string::npos ? -1L : std::stol(mntr.substr(mntr.find_first_of("0123456789", at)));
    };
    const auto before = watches();
    ASSERT_GE(before, 0L) << "mntr gives no zk_watch_count";
    Mutex m(*a, path);
    m.lock();
    ASSERT_TRUE(wait_until([&] { return watches() > before; })) << "the holder never watched its node";
    auto lost = m.async_wait_lost(boost::asio::use_future);
    zklock::testing::delete_node(*admin, m.node_path());
    EXPECT_EQ(get_within(lost), errc::node_deleted);
    EXPECT_FALSE(m.is_held());
}

TEST_F(MutexTest, SuspensionLongerThanTheSessionTimeoutIsLoss) {
    own_server();  // it stops, restarts or pauses the server
    const auto path = lock_path();
    auto s = connect(1000ms);
    Mutex m(*s, path);
    m.lock();
    auto lost = m.async_wait_lost(boost::asio::use_future);
    server_->pause();
    const auto reason = get_within(lost, 15s);
    server_->resume();
    EXPECT_EQ(reason, errc::connection_suspended);
    EXPECT_FALSE(m.is_held());
}

TEST_F(MutexTest, TwoMutexesOnOneSessionAreTwoContenders) {
    const auto path = lock_path();
    auto s = connect();
    Mutex first(*s, path);
    Mutex second(*s, path);
    first.lock();
    auto granted = second.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return second.queue_position() == 1u; }));
    const auto queue = first.contenders();
    ASSERT_EQ(queue.size(), 2u);
    EXPECT_EQ(queue[0].owner_session, queue[1].owner_session);
    EXPECT_FALSE(second.is_held());
    first.unlock();
    EXPECT_FALSE(get_within(granted));
    EXPECT_TRUE(second.is_held());
    EXPECT_GT(second.fencing_token(), queue[0].fencing_token);
    second.unlock();
}

TEST_F(MutexTest, AcquiringTwiceThroughOneObjectIsRefused) {
    const auto path = lock_path();
    auto s = connect();
    Mutex m(*s, path);
    m.lock();
    try {
        m.lock();
        FAIL() << "locked twice";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::already_acquiring);
        EXPECT_EQ(e.code(), std::errc::resource_deadlock_would_occur);  // as std::mutex reports it
        // Said once: "zklock::Lock::lock PATH: this lock object already holds or is acquiring the lock".
        const std::string what = e.what();
        EXPECT_EQ(what, "zklock::Lock::lock " + path + ": " + make_error_code(errc::already_acquiring).message());
    }
    std::error_code ec;
    EXPECT_FALSE(m.try_lock(ec));
    EXPECT_EQ(ec, errc::already_acquiring);
    EXPECT_TRUE(m.is_held());
    m.unlock();
}

TEST_F(MutexTest, RecursiveMutexIsReentrantPerThread) {
    const auto path = lock_path();
    auto s = connect();
    RecursiveMutex m(*s, path);
    m.lock();
    m.lock();
    EXPECT_EQ(m.hold_count(), 2u);
    const auto token = m.fencing_token();
    std::thread other([&] {
        EXPECT_EQ(m.hold_count(), 0u);
        EXPECT_FALSE(m.try_lock());
        EXPECT_FALSE(m.try_lock_for(100ms));
    });
    other.join();
    m.unlock();
    EXPECT_TRUE(m.is_held());
    EXPECT_EQ(m.fencing_token(), token);
    EXPECT_EQ(queue_length(path), 1u);
    m.unlock();
    EXPECT_FALSE(m.is_held());
    std::thread again([&] {
        std::scoped_lock lk(m);
        EXPECT_TRUE(m.is_held());
    });
    again.join();
}

TEST_F(MutexTest, CreateLostInFlightFindsItsNodeInsteadOfMakingASecond) {
    own_server();  // it stops, restarts or pauses the server
    const auto path = lock_path();
    auto s = connect(4000ms);
    EventLog log(*s);
    Mutex warmup(*s, path);  // make the parents exist so the create is the only request
    warmup.lock();
    warmup.unlock();
    Mutex m(*s, path);
    server_->pause();
    auto granted = m.async_lock(boost::asio::use_future);  // the create sits in the paused server's socket
    ASSERT_TRUE(log.wait_for(session_event::suspended));
    server_->resume();
    EXPECT_FALSE(get_within(granted, 15s));
    EXPECT_TRUE(m.is_held());
    const auto queue = m.contenders();
    ASSERT_EQ(queue.size(), 1u) << "a second node was created";
    EXPECT_EQ(path + "/" + queue[0].node, m.node_path());
    m.unlock();
}

TEST_F(MutexTest, AsyncTryLockDoesNotWaitAndContendersCarryNodeData) {
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    MutexOptions named;
    named.node_data = "worker-a";
    Mutex holder(*a, path, named);
    Mutex other(*b, path);
    auto first = holder.async_try_lock(boost::asio::use_future);
    const auto [ec1, got1] = get_within(first);
    EXPECT_FALSE(ec1) << ec1.message();
    EXPECT_TRUE(got1);
    auto second = other.async_try_lock(boost::asio::use_future);
    const auto [ec2, got2] = get_within(second);
    EXPECT_FALSE(ec2) << ec2.message();
    EXPECT_FALSE(got2);
    const auto queue = holder.contenders();
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(queue[0].data, "worker-a");
    holder.unlock();
}

TEST_F(MutexTest, ANodeWithoutDataOfItsOwnStoresHostnameAndPid) {
    // Locks given no node data share their session's one copy of the default;
    // one given data keeps its own beside them.
    const auto path = lock_path();
    auto s = connect();
    MutexOptions named;
    named.node_data = "worker-b";
    Mutex first(*s, path);
    Mutex second(*s, path, named);
    Mutex third(*s, path);
    first.lock();
    auto second_granted = second.async_lock(boost::asio::use_future);
    auto third_granted = third.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return first.contenders().size() == 3u; }));
    char host[256] = {};
    ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
    const auto expected = std::string(host) + ":" + std::to_string(::getpid());
    const auto queue = first.contenders();
    ASSERT_EQ(queue.size(), 3u);
    EXPECT_EQ(queue[0].data, expected);
    EXPECT_EQ(queue[1].data, "worker-b");
    EXPECT_EQ(queue[2].data, expected);
    first.unlock();
    EXPECT_FALSE(get_within(second_granted));
    second.unlock();
    EXPECT_FALSE(get_within(third_granted));
    third.unlock();
}

TEST_F(MutexTest, CancelWhileTheCreateIsInDoubtLeavesNoNode) {
    own_server();  // it stops, restarts or pauses the server
    const auto path = lock_path();
    auto s = connect(4000ms);
    EventLog log(*s);
    Mutex warmup(*s, path);
    warmup.lock();
    warmup.unlock();
    Mutex m(*s, path);
    boost::asio::cancellation_signal cancel;
    std::promise<std::error_code> result;
    server_->pause();
    m.async_lock(boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec) { result.set_value(ec); }));
    ASSERT_TRUE(log.wait_for(session_event::suspended));  // the create's reply is lost
    cancel.emit(boost::asio::cancellation_type::terminal);
    auto f = result.get_future();
    EXPECT_EQ(get_within(f), std::errc::operation_canceled);  // at once, though the server is unreachable
    server_->resume();
    // The paused server may still apply the create it had buffered: the session
    // finds the node by its guid and deletes it (checked again in TearDown).
    ASSERT_TRUE(wait_until([&] { return s->state() == session_state::connected; }, 20s));
    EXPECT_TRUE(wait_until([&] { return queue_length(path) == 0; }));
    EXPECT_FALSE(m.is_held());
}

// As with any Asio operation, a pending acquire keeps its handler's executor
// busy: an io_context that runs only that handler returns from run() after it.
TEST_F(MutexTest, APendingOperationKeepsTheHandlersIoContextRunning) {
    const auto path = lock_path();
    auto s = connect();
    Mutex m(*s, path);
    boost::asio::io_context other;
    std::error_code locked = make_error_code(errc::timeout);
    m.async_lock(boost::asio::bind_executor(other, [&](std::error_code ec) { locked = ec; }));
    other.run();
    EXPECT_FALSE(locked) << "run() returned before the handler ran: " << locked.message();
    std::error_code released = make_error_code(errc::timeout);
    other.restart();
    m.async_unlock(boost::asio::bind_executor(other, [&](std::error_code ec) { released = ec; }));
    other.run();
    EXPECT_FALSE(released) << released.message();
}

// Closing a session gives its locks away: its holders stop holding before the
// server hands any lock to the next waiter.
TEST_F(MutexTest, ClosingTheSessionEndsItsHoldsBeforeTheNextWaiterIsGranted) {
    const auto path = lock_path();
    auto b = connect();
    Mutex waiter(*b, path);
    for (int round = 0; round < 10; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        auto a = connect();
        Mutex holder(*a, path);
        holder.lock();
        std::promise<bool> holder_still_held;
        waiter.async_lock([&](std::error_code ec) { holder_still_held.set_value(!ec && holder.is_held()); });
        ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }));
        a->close();
        auto f = holder_still_held.get_future();
        EXPECT_FALSE(get_within(f)) << "the next waiter was granted while the closed session's holder still held";
        waiter.unlock();
    }
}

TEST_F(MutexTest, RecursiveMutexRefusesReentryAfterTheHoldWasLost) {
    const auto path = lock_path();
    auto s = connect();
    RecursiveMutex m(*s, path);
    std::promise<std::error_code> lost;
    m.on_lost([&](std::error_code ec) { lost.set_value(ec); });
    m.lock();
    zklock::testing::expire_session(*s);
    auto f = lost.get_future();
    EXPECT_EQ(get_within(f), errc::session_expired);
    try {
        m.lock();
        ADD_FAILURE() << "re-entered a lock that is no longer held";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::session_expired) << e.what();
    }
    EXPECT_THROW(m.try_lock(), zklock::error);
    std::error_code ec;
    EXPECT_FALSE(m.try_lock(ec));
    EXPECT_EQ(ec, errc::session_expired);
    m.lock(ec);
    EXPECT_EQ(ec, errc::session_expired);
    EXPECT_FALSE(m.try_lock_for(1s, ec));
    EXPECT_EQ(ec, errc::session_expired);
    EXPECT_EQ(m.hold_count(), 1u);
    m.unlock();
    EXPECT_EQ(m.hold_count(), 0u);
    m.lock();  // a new hold after the last level was released
    EXPECT_TRUE(m.is_held());
    m.unlock();
}

TEST_F(MutexTest, RecursiveMutexUnderContentionFromManyThreads) {
    const auto path = lock_path();
    auto s = connect();
    RecursiveMutex m(*s, path);
    std::atomic<int> inside{0}, violations{0}, errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 10; ++i) {
                try {
                    std::scoped_lock outer(m);
                    std::scoped_lock inner(m);  // re-entrant
                    if (++inside != 1) ++violations;
                    --inside;
                } catch (const std::exception& e) {
                    ADD_FAILURE() << e.what();
                    ++errors;
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(errors, 0);
    EXPECT_EQ(violations, 0);
}

TEST_F(MutexTest, ClosingTheSessionTellsTheHolder) {
    const auto path = lock_path();
    auto s = connect();
    Mutex m(*s, path);
    m.lock();
    auto lost = m.async_wait_lost(boost::asio::use_future);
    s->close();
    EXPECT_EQ(get_within(lost), errc::session_closed);
    EXPECT_FALSE(m.is_held());
}

TEST_F(MutexTest, AMutexOutlivingItsSessionFailsCleanly) {
    const auto path = lock_path();
    auto s = connect();
    Mutex m(*s, path);
    s.reset();  // closes the session and stops its thread
    std::error_code ec;
    m.lock(ec);
    EXPECT_EQ(ec, errc::session_closed);
    EXPECT_FALSE(m.is_held());
}

// A lock whose directory is missing under parents that exist (a new lock in a
// known place) costs one round trip: the directory's create goes ahead of the
// node's, not a create the server refuses (no directory), then the directory,
// then the node again. A second lock handle on that directory sends no create
// of it: the session has seen it (a create the server refuses, NODEEXISTS, is
// still a transaction it logs and syncs). Counted by the server's last zxid.
TEST_F(MutexTest, AMissingLockDirectoryUnderExistingParentsCostsOneCreate) {
    // A server of its own: on the shared one, the empty directories of earlier
    // tests are reaped once a minute, each a transaction of the server's.
    own_server();
    auto s = connect();
    const auto path = lock_path("a/b/c/lock");
    create_parents(*s, path);  // every ancestor, not the lock directory
    const auto last_zxid = [&] {
        const auto srvr = server_->four_letter_word("srvr");
        const auto at = srvr.find("Zxid: 0x");
        if (at == std::string::npos) throw std::runtime_error("no Zxid in srvr's answer: " + srvr);
        return std::stoll(srvr.substr(at + 8), nullptr, 16);
    };
    const auto before = last_zxid();
    Mutex m(*s, path), other(*s, path);
    m.lock();
    auto granted = other.async_lock(boost::asio::use_future);
    wait_for_contenders(*s, path, 2, 20s);
    auto released = m.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));  // answered: its transaction is the server's last
    EXPECT_FALSE(get_within(granted));
    // The directory, m's node, other's node, m's delete: 4, and none can be
    // the server's reaping (the directory was never empty). A refused create
    // ahead of the directory's, or the directory's again for `other`, is 5;
    // creating every ancestor again, 8.
    EXPECT_EQ(last_zxid() - before, 4);
    other.unlock();
}
