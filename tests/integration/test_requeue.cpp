// QueueLock::requeue(): the release and the next node in one transaction, on a
// real server: one transaction per turn (the server's zxid), strict round robin
// among workers, a kazoo contender never overtaken (it sees an ordinary
// release), the other recipes' sides, and the errors.
#include "kazoo_fixture.hpp"
#include "log_support.hpp"
#include "support.hpp"

#include <zklock/acl.hpp>
#include <zklock/log.hpp>
#include <zklock/mutex.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/faulty_link.hpp>

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zklock::test {
namespace {

/// The server's last committed zxid (srvr's "Zxid: 0x..."): every
/// transaction advances it by one.
std::int64_t last_zxid(testing::ZooKeeperServer& server) {
    const auto srvr = server.four_letter_word("srvr", 5s);
    const auto at = srvr.find("Zxid: 0x");
    if (at == std::string::npos) return -1;
    return std::stoll(srvr.substr(at + 8), nullptr, 16);
}

class RequeueTest : public KazooInteropTest {};

TEST_F(RequeueTest, EachTurnIsOneTransaction) {
    const auto path = lock_path();
    auto s = connect();
    auto observer = connect();  // its session's transaction comes before the count
    Mutex m(*s, path);
    m.lock();
    const auto first_token = m.fencing_token();
    const auto first_node = m.node_path();
    constexpr int turns = 5;
    const auto before = last_zxid(*server_);
    ASSERT_GT(before, 0);
    for (int t = 0; t < turns; ++t) m.requeue();
    EXPECT_EQ(last_zxid(*server_) - before, turns) << "a requeue is not one transaction";
    EXPECT_TRUE(m.is_held());
    EXPECT_NE(m.node_path(), first_node);
    // The token is the new node's czxid: the last requeue's transaction.
    EXPECT_EQ(m.fencing_token(), before + turns);
    EXPECT_GT(m.fencing_token(), first_token);
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(path + "/" + queue[0].node, m.node_path());
    m.unlock();
}

TEST_F(RequeueTest, WorkersTakeTurnsInStrictRoundRobin) {
    const auto path = lock_path();
    constexpr int workers = 3;
    constexpr int turns = 4;
    auto observer = connect();
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<std::unique_ptr<Mutex>> locks;
    for (int w = 0; w < workers; ++w) {
        sessions.push_back(connect());
        locks.push_back(std::make_unique<Mutex>(*sessions.back(), path));
    }
    // Queued in order: worker 0 holds, 1 and 2 wait behind it.
    std::vector<std::future<std::error_code>> granted;
    locks[0]->lock();
    for (int w = 1; w < workers; ++w) {
        granted.push_back(locks[w]->async_lock(boost::asio::use_future));
        ASSERT_EQ(wait_for_contenders(*observer, path, w + 1, 30s).size(), static_cast<std::size_t>(w + 1));
    }
    std::mutex order_mutex;
    std::vector<int> order;
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            // Bounded waits: a worker that never gets its turn fails the test
            // instead of leaving the others (and join()) waiting for ever.
            if (w > 0) {
                if (granted[w - 1].wait_for(30s) != std::future_status::ready) {
                    ADD_FAILURE() << "worker " << w << " was never granted its first turn";
                    return;
                }
                EXPECT_FALSE(granted[w - 1].get());
            }
            for (int t = 0; t < turns; ++t) {
                {
                    std::lock_guard lk(order_mutex);  // while holding: the grant order
                    order.push_back(w);
                }
                if (t + 1 < turns) {
                    std::error_code ec;
                    if (!locks[w]->try_requeue_for(30s, ec) || ec) {
                        ADD_FAILURE() << "worker " << w << ", turn " << t + 2 << ": " << ec.message();
                        return;
                    }
                } else {
                    locks[w]->unlock();
                }
            }
        });
    for (auto& t : threads) t.join();
    std::vector<int> expected;
    for (int t = 0; t < turns; ++t)
        for (int w = 0; w < workers; ++w) expected.push_back(w);
    EXPECT_EQ(order, expected);
}

TEST_F(RequeueTest, AKazooContenderQueuedWhileHoldingIsNotOvertaken) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto s = connect(4000ms);
    Mutex worker(*s, path);
    worker.lock();
    auto kazoo = peer(path, "k", kazoo_sees_zklock_mutex);
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (std::vector<std::string>{"zklock", "kazoo"}));
    auto next_turn = worker.async_requeue(boost::asio::use_future);
    // kazoo sees an ordinary release and holds; the worker's node is behind it.
    ASSERT_TRUE(kazoo->wait_for("acquired")) << kazoo->output();
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (std::vector<std::string>{"kazoo", "zklock"}));
    EXPECT_FALSE(worker.is_held());
    EXPECT_EQ(next_turn.wait_for(0s), std::future_status::timeout);
    kazoo->release();
    EXPECT_FALSE(get_within(next_turn, 30s));
    EXPECT_TRUE(worker.is_held());
    EXPECT_TRUE(kazoo->exited_cleanly());
    worker.unlock();
}

TEST_F(RequeueTest, AWorkerQueuedBehindAKazooHolderRequeuesBehindItsNextWaiter) {
    // The other way: kazoo holds, the worker waits and is granted on kazoo's
    // release; a second kazoo client queues while the worker holds, and the
    // worker's requeue hands the lock to it before the worker's next turn.
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto first = peer(path, "k1", kazoo_sees_zklock_mutex);
    ASSERT_TRUE(first->wait_for("acquired")) << first->output();
    auto s = connect(4000ms);
    Mutex worker(*s, path);
    auto granted = worker.async_lock(boost::asio::use_future);
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (std::vector<std::string>{"kazoo", "zklock"}));
    first->release();
    EXPECT_FALSE(get_within(granted, 30s));
    EXPECT_TRUE(first->exited_cleanly());
    auto second = peer(path, "k2", kazoo_sees_zklock_mutex);
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (std::vector<std::string>{"zklock", "kazoo"}));
    auto next_turn = worker.async_requeue(boost::asio::use_future);
    ASSERT_TRUE(second->wait_for("acquired")) << second->output();
    EXPECT_FALSE(worker.is_held());
    second->release();
    EXPECT_FALSE(get_within(next_turn, 30s));
    EXPECT_TRUE(second->exited_cleanly());
    worker.unlock();
}

TEST_F(RequeueTest, AMultiWhoseReplyIsLostIsFoundByTheNewGuidAndNotSentAgain) {
    // The server applies the multi, the link loses its reply and resets the
    // connection: once connected again, the lock finds its new node by the
    // new guid (queued, granted), and does not send the multi again (which
    // would fail on the held node, gone, as a loss).
    const auto path = lock_path();
    testing::FaultyLink link(server_->port());
    auto o = options();
    o.connect = link.connect_string();
    Session s(o);
    s.connect();
    auto observer = connect();
    const auto watches = [&] {
        const auto mntr = server_->four_letter_word("mntr", 5s);
        const auto at = mntr.find("zk_watch_count");
        return at == std::string::npos ? -1L : std::stol(mntr.substr(mntr.find_first_of("0123456789", at)));
    };
    const auto watches_before = watches();
    ASSERT_GE(watches_before, 0L);
    Mutex m(s, path);
    m.lock();
    // The holder's watch on its own node names the node too: let it go first,
    // so that the next request naming the node is the multi.
    ASSERT_TRUE(wait_until([&] { return watches() > watches_before; })) << "the holder never watched its node";
    const auto old_node = m.node_path();
    const auto before = last_zxid(*server_);
    link.drop_next_reply(old_node);
    std::error_code ec;
    EXPECT_TRUE(m.try_requeue_for(30s, ec));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(link.replies_dropped(), 1u);
    EXPECT_TRUE(m.is_held());
    EXPECT_NE(m.node_path(), old_node);
    EXPECT_EQ(last_zxid(*server_) - before, 1) << "the multi was applied more than once, or not at all";
    EXPECT_EQ(m.fencing_token(), before + 1);
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(path + "/" + queue[0].node, m.node_path());
    m.unlock();
}

TEST_F(RequeueTest, WithLockDelayTheRequeueRecordsACleanReleaseInTheSameTransaction) {
    // A delay no test waits out: a grant within the test's deadlines came
    // without it, so the waiter read the requeue's clean-release record.
    MutexOptions o;
    o.lock_delay = std::chrono::hours(1);
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    auto observer = connect();
    // A new directory's first holder waits the delay: a gate with 1 ms holds
    // first and hands the worker the lock by its clean release.
    MutexOptions g;
    g.lock_delay = 1ms;
    Mutex gate(*observer, path, g);
    gate.lock();
    Mutex worker(*s1, path, o);
    auto worker_granted = worker.async_lock(boost::asio::use_future);
    wait_for_contenders(*observer, path, 2, 10s);
    wait_for_watcher(*s1, gate.node_path());
    gate.unlock();
    ASSERT_FALSE(get_within(worker_granted)) << "the gate's clean release handed the worker the lock";
    Mutex waiter(*s2, path, o);
    auto granted = waiter.async_lock(boost::asio::use_future);
    wait_for_contenders(*observer, path, 2, 10s);
    wait_for_watcher(*s2, worker.node_path());  // the waiter listed with the worker ahead of it
    const auto before = last_zxid(*server_);
    auto next_turn = worker.async_requeue(boost::asio::use_future);
    EXPECT_FALSE(get_within(granted)) << "the waiter was not handed the lock cleanly";
    EXPECT_EQ(last_zxid(*server_) - before, 1) << "the record is not in the requeue's transaction";
    waiter.unlock();
    EXPECT_FALSE(get_within(next_turn)) << "the worker's next turn came without a clean handover";
    worker.unlock();
}

TEST_F(RequeueTest, ARecursiveMutexRequeuesOnlyAtItsOutermostLevel) {
    const auto path = lock_path();
    auto s = connect();
    RecursiveMutex m(*s, path);
    std::error_code ec;
    m.requeue(ec);
    EXPECT_EQ(ec, errc::not_held);
    m.lock();
    m.lock();
    const auto node = m.node_path();
    const auto before = last_zxid(*server_);
    m.requeue(ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    EXPECT_THROW(m.requeue(), zklock::error);
    EXPECT_EQ(last_zxid(*server_), before) << "an inner level's requeue sent something";
    EXPECT_EQ(m.hold_count(), 2u);
    EXPECT_EQ(m.node_path(), node);
    m.unlock();
    m.requeue();
    EXPECT_EQ(last_zxid(*server_) - before, 1);
    EXPECT_EQ(m.hold_count(), 1u);
    EXPECT_NE(m.node_path(), node);
    m.unlock();
    EXPECT_EQ(m.hold_count(), 0u);
}

TEST_F(RequeueTest, ANotHeldLockIsRefusedAndSendsNothing) {
    const auto path = lock_path();
    auto s = connect();
    Mutex m(*s, path);
    const auto before = last_zxid(*server_);
    std::error_code ec;
    m.requeue(ec);
    EXPECT_EQ(ec, errc::not_held);
    EXPECT_THROW(m.requeue(), zklock::error);
    auto async = m.async_requeue(boost::asio::use_future);
    EXPECT_EQ(get_within(async), errc::not_held);
    EXPECT_EQ(last_zxid(*server_), before);
}

TEST_F(RequeueTest, ARequeueAfterTheHeldNodeWasDeletedFailsAndLeavesNothing) {
    const auto path = lock_path();
    auto s = connect();
    auto admin = connect();
    Mutex m(*s, path);
    m.lock();
    const auto node = m.node_path();
    // Deleted before the holder's watch could tell it (a hold's first moments).
    zklock::testing::delete_node(*admin, node);
    // The multi fails on the held node's delete (node_deleted), unless the
    // holder's own watch told it first (not_held, nothing sent).
    std::error_code ec;
    EXPECT_FALSE(m.try_requeue_for(10s, ec));
    EXPECT_TRUE(ec == errc::node_deleted || ec == errc::not_held) << ec.message();
    EXPECT_FALSE(m.is_held());
    EXPECT_TRUE(list_contenders(*admin, path).empty()) << "the new node was left behind";
}

TEST_F(RequeueTest, ATimedOutTurnLeavesNothingBehind) {
    const auto path = lock_path();
    auto s = connect();
    auto other = connect();
    auto observer = connect();
    Mutex worker(*s, path);
    Mutex waiter(*other, path);
    worker.lock();
    auto granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_EQ(wait_for_contenders(*observer, path, 2, 30s).size(), 2u);
    // The waiter is granted by the requeue and keeps the lock: the worker's
    // next turn does not come within its bound.
    EXPECT_FALSE(worker.try_requeue_for(300ms));
    EXPECT_FALSE(get_within(granted));
    EXPECT_FALSE(worker.is_held());
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(path + "/" + queue[0].node, waiter.node_path());
    waiter.unlock();
}

TEST_F(RequeueTest, ASemaphorePermitAndBothSidesOfASharedMutexRequeueInOneTransaction) {
    auto s = connect();
    Semaphore sem(*s, lock_path("semaphore"), 2);
    auto permit = sem.permit();
    permit.lock();
    const auto before = last_zxid(*server_);
    permit.requeue();
    EXPECT_EQ(last_zxid(*server_) - before, 1);
    EXPECT_TRUE(permit.is_held());
    SharedMutex rw(*s, lock_path("shared"));
    for (auto* side : {&rw.writer(), &rw.reader()}) {
        side->lock();
        const auto before = last_zxid(*server_);
        side->requeue();
        EXPECT_EQ(last_zxid(*server_) - before, 1);
        EXPECT_TRUE(side->is_held());
        side->unlock();
    }
    permit.unlock();
}

TEST_F(RequeueTest, AMutexTurnIsOneRoundTripItsListingRightBehindTheMulti) {
    // The C client's debug log names every request as it is sent. A turn
    // that waited for the multi's reply to read the new node's Stat (the
    // token) would send that read, then the listing; one round trip sends
    // the listing right behind the multi, and the token still is the new
    // node's czxid (the transaction's zxid).
    const auto level = zookeeper_client_log_level();
    set_zookeeper_client_log_level(log_level::debug);
    struct restore {
        log_level level;
        ~restore() { set_zookeeper_client_log_level(level); }
    } restore_level{level};
    const auto path = lock_path();
    collected_log log;
    auto o = options();
    o.log = log.sink(log_level::debug);
    Session s(o);
    s.connect();
    Mutex m(s, path);
    m.lock();
    constexpr int turns = 3;
    const auto before = last_zxid(*server_);
    ASSERT_GT(before, 0);
    for (int t = 0; t < turns; ++t) {
        m.requeue();
        EXPECT_EQ(m.fencing_token(), before + t + 1) << "turn " << t + 1 << ": the token is not the multi's zxid";
    }
    m.unlock();
    std::vector<std::string> sent;  // each request, in the order the C client sent them
    for (const auto& r : log.all())
        if (r.source == "zookeeper" && r.message.find("Sending") != std::string::npos) sent.push_back(r.message);
    int multis = 0;
    for (std::size_t i = 0; i < sent.size(); ++i) {
        if (sent[i].find("multi") == std::string::npos) continue;
        ++multis;
        ASSERT_LT(i + 1, sent.size());
        EXPECT_NE(sent[i + 1].find("[" + path + "]"), std::string::npos)
            << "the request after turn " << multis << "'s multi is not the listing of " << path << ": " << sent[i + 1];
    }
    EXPECT_EQ(multis, turns) << "the C client's log did not name every multi";
}

TEST_F(RequeueTest, ARefusedRequeueSaysWhyReleasesTheHoldAndLeavesNothing) {
    // The lock directory's ACL changed under the holder: nobody may create
    // in it any more. The multi is refused (on the `.released` sibling, then
    // without it on the new node), the held node is released as unlock()
    // releases it, and the throwing form says what was refused.
    const auto path = lock_path();
    auto s = connect();
    auto admin = connect();
    Mutex m(*s, path);
    m.lock();
    const auto node = m.node_path();
    testing::set_acl(*admin, path, {world_acl(perms::all & ~perms::create)});
    try {
        m.try_requeue_for(30s);
        ADD_FAILURE() << "try_requeue_for did not throw";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::no_auth);
        EXPECT_NE(std::string(e.what()).find("create lock nodes under " + path), std::string::npos) << e.what();
    }
    EXPECT_FALSE(m.is_held());
    std::vector<contender> left;
    EXPECT_TRUE(wait_until([&] { return (left = list_contenders(*admin, path)).empty(); }))
        << left.size() << " node(s) left: the held node was not released";
    testing::set_acl(*admin, path, {world_acl(perms::all)});
}

TEST_F(RequeueTest, ARequeueWhoseReleaseProofIsRefusedIsSentWithoutItAndQueues) {
    // The worker is granted with a waiter behind it, so its release carries
    // the `.released` proof; a sibling of that name exists already. The
    // multi is refused on the proof's create and sent again without it,
    // with the listing that decides the worker's next turn.
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    auto s3 = connect();
    auto admin = connect();
    Mutex first(*s1, path), worker(*s2, path), waiter(*s3, path);
    first.lock();
    auto granted = worker.async_lock(boost::asio::use_future);
    ASSERT_EQ(wait_for_contenders(*admin, path, 2, 30s).size(), 2u);
    auto waiter_granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_EQ(wait_for_contenders(*admin, path, 3, 30s).size(), 3u);
    first.unlock();
    ASSERT_FALSE(get_within(granted, 30s));
    const auto node = worker.node_path();
    testing::create_node(*admin, node + ".released");
    auto next_turn = worker.async_requeue(boost::asio::use_future);
    EXPECT_FALSE(get_within(waiter_granted, 30s)) << "the requeue did not hand the lock on";
    waiter.unlock();
    EXPECT_FALSE(get_within(next_turn, 30s)) << "the requeue never got its next turn";
    EXPECT_TRUE(worker.is_held());
    EXPECT_NE(worker.node_path(), node);
    worker.unlock();
    zklock::testing::delete_node(*admin, node + ".released");
}

TEST_F(RequeueTest, ARecursiveMutexRequeueAfterALossReportsTheLoss) {
    const auto path = lock_path();
    auto s = connect();
    auto admin = connect();
    RecursiveMutex m(*s, path);
    std::atomic<int> losses{0};
    m.on_lost([&](std::error_code) { ++losses; });
    m.lock();
    zklock::testing::delete_node(*admin, m.node_path());
    ASSERT_TRUE(wait_until([&] { return losses.load() > 0; }, 30s)) << "the loss was never reported";
    const auto before = last_zxid(*server_);
    std::error_code ec;
    m.requeue(ec);
    EXPECT_EQ(ec, errc::node_deleted) << ec.message();
    EXPECT_EQ(m.hold_count(), 0u);
    EXPECT_EQ(last_zxid(*server_), before) << "a requeue of a lost hold sent something";
    m.lock();
    zklock::testing::delete_node(*admin, m.node_path());
    ASSERT_TRUE(wait_until([&] { return losses.load() > 1; }, 30s)) << "the second loss was never reported";
    try {
        m.requeue();
        ADD_FAILURE() << "requeue did not throw";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::node_deleted);
        EXPECT_NE(std::string(e.what()).find("was lost"), std::string::npos) << e.what();
    }
    EXPECT_EQ(m.hold_count(), 0u);
}

} // namespace
} // namespace zklock::test
