// zklock and the real Apache Curator client (Debian's libcurator-recipes-java,
// driven through tests/interop/CuratorPeer.java) on one lock path: Mutex with
// InterProcessMutex both ways, under churn and FIFO across kinds, SharedMutex with
// InterProcessReadWriteLock, LeaderElection with LeaderSelector and LeaderLatch,
// and cooperative revocation both ways (Revoker, makeRevocable).
// Where a Curator recipe does not see zklock's nodes, a test shows that too,
// so docs/interop.md's "one way" cells rest on the real client.
//
// Holders are ordered by CLOCK_MONOTONIC stamps (System.nanoTime() reads the same
// clock): a hold runs from the moment the acquire returned to the moment the
// release was asked for, so the checks compare stamps, never durations.
#include "curator_fixture.hpp"
#include "foreign_semaphore.hpp"
#include "grant_support.hpp"
#include "support.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/mutex.hpp>
#include <zklock/revocation.hpp>
#include <zklock/shared_mutex.hpp>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>

namespace zklock::test {
namespace {

using names = std::vector<std::string>;

TEST_F(CuratorInteropTest, MutexAndInterProcessMutexWaitForEachOther) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto curator = peer(path);
    auto session = connect(4000ms);
    const std::map<std::int64_t, std::string> who{{session->session_id(), "zklock"}};
    Mutex mutex(*session, path);

    // Curator holds: zklock queues behind it and gets the lock once it is released.
    curator->mutex("c1");
    ASSERT_TRUE(curator->wait_for("acquired", "c1"));
    const auto granted = grant::make();
    mutex.async_lock(on_grant(granted));
    EXPECT_EQ(wait_for_queue(*observer, path, 2, who), (names{"curator", "zklock"}));
    EXPECT_EQ(decided_position([&] { return mutex.queue_position(); }), 1u)
        << "zklock does not count Curator's InterProcessMutex node";
    EXPECT_TRUE(pending(granted)) << "zklock acquired beside Curator's InterProcessMutex";
    curator->release("c1");
    const auto c1_leave = curator->wait_for("releasing", "c1");
    ASSERT_FALSE(get_within(granted->result, 60s));
    ASSERT_TRUE(c1_leave);
    EXPECT_LT(*c1_leave, granted->at.load()) << "zklock acquired while Curator held the lock";

    // zklock holds: Curator queues behind zklock's node and gets the lock once it is released.
    const auto node = std::filesystem::path(mutex.node_path()).filename().string();
    curator->mutex("c2");
    EXPECT_EQ(wait_for_queue(*observer, path, 2, who), (names{"zklock", "curator"}));
    EXPECT_EQ(curator->wait_for_line("predecessor", "c2"), names{node})
        << "Curator's InterProcessMutex does not wait for zklock's node";
    EXPECT_FALSE(curator->printed("acquired", "c2"));
    const auto zk_leave = monotonic_ns();
    mutex.unlock();
    const auto c2_enter = curator->wait_for("acquired", "c2");
    ASSERT_TRUE(c2_enter);
    EXPECT_LT(zk_leave, *c2_enter) << "Curator acquired while zklock held the lock";
    curator->release("c2");
    ASSERT_TRUE(curator->wait_for("released", "c2"));
    EXPECT_TRUE(curator->quit());
}

TEST_F(CuratorInteropTest, MutualExclusionUnderChurnWithInterProcessMutexes) {
    const auto path = lock_path();
    constexpr int rounds = 25;
    // Two InterProcessMutex contenders and two zklock Mutex clients take turns on one path.
    auto curator = peer(path);
    std::vector<std::unique_ptr<Session>> sessions;
    for (int c = 0; c < 2; ++c) sessions.push_back(connect(4000ms));
    curator->churn("c1", rounds);
    curator->churn("c2", rounds);
    // zklock starts once Curator holds, so both kinds are queued together from the first turn on.
    ASSERT_TRUE(wait_until([&] { return curator->printed("acquired", "c1") || curator->printed("acquired", "c2"); },
                           60s))
        << curator->output();
    auto all = zklock_churn(sessions, path, rounds);
    EXPECT_EQ(all.size(), static_cast<std::size_t>(2 * rounds)) << "zklock made no full progress";
    for (const auto* id : {"c1", "c2"}) {
        ASSERT_TRUE(curator->wait_for_line("churned", id));
        const auto s = curator->sections(id);
        EXPECT_EQ(s.size(), static_cast<std::size_t>(rounds)) << id << " made no full progress";
        all.insert(all.end(), s.begin(), s.end());
    }
    ASSERT_TRUE(curator->quit());
    expect_turns_without_overlap(all, "curator");
}

TEST_F(CuratorInteropTest, FifoAcrossKinds) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto curator = peer(path);
    auto s1 = connect(4000ms);
    auto s2 = connect(4000ms);
    const std::map<std::int64_t, std::string> who{{s1->session_id(), "first"}, {s2->session_id(), "last"}};
    Mutex first(*s1, path);
    Mutex last(*s2, path);

    // zklock, then Curator, then zklock again.
    first.lock();
    curator->mutex("c");
    EXPECT_EQ(wait_for_queue(*observer, path, 2, who), (names{"first", "curator"}));
    const auto last_granted = grant::make();
    last.async_lock(on_grant(last_granted));
    EXPECT_EQ(wait_for_queue(*observer, path, 3, who), (names{"first", "curator", "last"}));
    EXPECT_EQ(decided_position([&] { return last.queue_position(); }), 2u);

    const auto first_leave = monotonic_ns();
    first.unlock();
    const auto c_enter = curator->wait_for("acquired", "c");
    ASSERT_TRUE(c_enter);
    EXPECT_LT(first_leave, *c_enter) << "Curator acquired while the first zklock client held the lock";
    EXPECT_TRUE(pending(last_granted)) << "the last zklock client acquired while Curator held the lock";
    curator->release("c");
    const auto c_leave = curator->wait_for("releasing", "c");
    ASSERT_FALSE(get_within(last_granted->result, 60s));
    ASSERT_TRUE(c_leave);
    EXPECT_LT(*c_leave, last_granted->at.load()) << "the last zklock client acquired while Curator held the lock";
    last.unlock();
    EXPECT_TRUE(curator->quit());
}

TEST_F(CuratorInteropTest, ACuratorWriterExcludesZklockReadersAndWriters) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto curator = peer(path);
    auto s1 = connect(4000ms);
    auto s2 = connect(4000ms);
    const std::map<std::int64_t, std::string> who{{s1->session_id(), "reader"}, {s2->session_id(), "writer"}};
    SharedMutex reader(*s1, path);
    SharedMutex writer(*s2, path);

    curator->write("w");
    ASSERT_TRUE(curator->wait_for("acquired", "w"));
    EXPECT_NE(curator->node("acquired", "w").find("-__WRIT__"), std::string::npos) << curator->output();
    const auto reader_granted = grant::make();
    const auto writer_granted = grant::make();
    reader.reader().async_lock(on_grant(reader_granted));
    EXPECT_EQ(decided_position([&] { return reader.reader().queue_position(); }), 1u)
        << "a zklock reader does not wait for Curator's __WRIT__ node";
    writer.writer().async_lock(on_grant(writer_granted));
    EXPECT_EQ(wait_for_queue(*observer, path, 3, who), (names{"curator", "reader", "writer"}));
    EXPECT_EQ(decided_position([&] { return writer.writer().queue_position(); }), 2u);
    EXPECT_TRUE(pending(reader_granted)) << "a zklock reader acquired beside Curator's writer";
    EXPECT_TRUE(pending(writer_granted)) << "a zklock writer acquired beside Curator's writer";

    curator->release("w");
    const auto w_leave = curator->wait_for("releasing", "w");
    ASSERT_FALSE(get_within(reader_granted->result, 60s));
    ASSERT_TRUE(w_leave);
    EXPECT_LT(*w_leave, reader_granted->at.load()) << "a zklock reader acquired while Curator's writer held";
    EXPECT_TRUE(pending(writer_granted)) << "the zklock writer acquired beside the zklock reader";
    reader.unlock_shared();
    ASSERT_FALSE(get_within(writer_granted->result, 60s));
    EXPECT_LT(*w_leave, writer_granted->at.load()) << "a zklock writer acquired while Curator's writer held";
    writer.unlock();
    EXPECT_TRUE(curator->quit());
}

TEST_F(CuratorInteropTest, CuratorReadersShareWithZklockReaders) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto curator = peer(path);
    auto s1 = connect(4000ms);
    SharedMutex reader(*s1, path);

    // A Curator reader holds; a zklock reader gets in beside it.
    curator->read("r1");
    ASSERT_TRUE(curator->wait_for("acquired", "r1"));
    EXPECT_NE(curator->node("acquired", "r1").find("-__READ__"), std::string::npos) << curator->output();
    ASSERT_TRUE(reader.try_lock_shared_for(60s)) << "a zklock reader did not share with Curator's reader";
    // ... and a second Curator reader beside both.
    curator->read("r2");
    ASSERT_TRUE(curator->wait_for("acquired", "r2"));
    EXPECT_EQ(wait_for_queue(*observer, path, 3, {{s1->session_id(), "zklock"}}),
              (names{"curator", "zklock", "curator"}));
    // Nobody let go in between: the three held at once.
    EXPECT_FALSE(curator->printed("releasing", "r1"));
    EXPECT_TRUE(reader.reader().is_held());
    reader.unlock_shared();
    curator->release("r1");
    curator->release("r2");
    ASSERT_TRUE(curator->wait_for("released", "r1"));
    ASSERT_TRUE(curator->wait_for("released", "r2"));
    EXPECT_TRUE(curator->quit());
}

// Curator's InterProcessReadWriteLock counts only `__WRIT__` nodes as writers
// and sorts names without its markers after its own: neither side waits for a
// zklock writer. With zklock's default names (`write-`, `read-`) zklock's
// SharedMutex and Curator's read-write lock exclude one way only; this pins that
// down with the real client (node_names::curator makes it both ways:
// test_interop_curator_names.cpp).
TEST_F(CuratorInteropTest, CuratorsReadWriteLockDoesNotWaitForAZklockWriter) {
    const auto path = lock_path();
    auto curator = peer(path);
    auto s1 = connect(4000ms);
    SharedMutex writer(*s1, path);
    writer.lock();
    // One at a time: Curator's writer would wait for Curator's reader.
    curator->read("r");
    const auto r_enter = curator->wait_for("acquired", "r");
    curator->release("r");
    ASSERT_TRUE(curator->wait_for("released", "r"));
    curator->write("w");
    const auto w_enter = curator->wait_for("acquired", "w");
    EXPECT_TRUE(writer.writer().is_held());  // never let go: Curator's reader and writer entered beside it
    const auto zk_leave = monotonic_ns();
    writer.unlock();
    ASSERT_TRUE(r_enter && w_enter);
    EXPECT_LT(*r_enter, zk_leave);
    EXPECT_LT(*w_enter, zk_leave);
    curator->release("w");
    ASSERT_TRUE(curator->wait_for("released", "w"));
    EXPECT_TRUE(curator->quit());
}

TEST_F(CuratorInteropTest, ElectionTakesTurnsWithLeaderSelector) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto curator = peer(path);
    auto session = connect(4000ms);
    const std::map<std::int64_t, std::string> who{{session->session_id(), "zklock"}};
    LeaderElection election(*session, path, "zklock");

    // LeaderSelector s1 leads, zklock waits behind it, LeaderSelector s2 behind zklock.
    curator->selector("s1");
    ASSERT_TRUE(curator->wait_for("leader", "s1"));
    const auto led = grant::make();
    election.async_campaign(on_grant(led));
    EXPECT_EQ(wait_for_queue(*observer, path, 2, who), (names{"curator", "zklock"}));
    const auto info = election.leader();
    ASSERT_TRUE(info);
    EXPECT_EQ(info->participant_id, "s1");  // LeaderSelector's id is its node's data
    curator->selector("s2");
    EXPECT_EQ(wait_for_queue(*observer, path, 3, who), (names{"curator", "zklock", "curator"}));
    EXPECT_TRUE(pending(led)) << "zklock led beside LeaderSelector s1";

    // Each hands over to the next; no two lead at once.
    curator->release("s1");
    const auto s1_leave = curator->wait_for("releasing", "s1");
    ASSERT_FALSE(get_within(led->result, 60s));
    ASSERT_TRUE(s1_leave);
    EXPECT_LT(*s1_leave, led->at.load()) << "zklock led while LeaderSelector s1 led";
    EXPECT_TRUE(election.is_leader());
    EXPECT_FALSE(curator->printed("leader", "s2")) << "LeaderSelector s2 led beside zklock";
    const auto zk_leave = monotonic_ns();
    election.resign();
    const auto s2_enter = curator->wait_for("leader", "s2");
    ASSERT_TRUE(s2_enter);
    EXPECT_LT(zk_leave, *s2_enter) << "LeaderSelector s2 led while zklock led";
    curator->release("s2");
    ASSERT_TRUE(curator->wait_for("released", "s2"));
    EXPECT_TRUE(curator->quit());
}

TEST_F(CuratorInteropTest, ElectionWaitsForALeaderLatch) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto curator = peer(path);
    auto session = connect(4000ms);
    LeaderElection election(*session, path, "zklock");

    curator->latch("l");
    ASSERT_TRUE(curator->wait_for("leader", "l"));
    EXPECT_NE(curator->node("leader", "l").find("-latch-"), std::string::npos) << curator->output();
    const auto led = grant::make();
    election.async_campaign(on_grant(led));
    EXPECT_EQ(wait_for_queue(*observer, path, 2, {{session->session_id(), "zklock"}}), (names{"curator", "zklock"}));
    // What `zklock status` shows: the latch's node in Curator's dialect.
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 2u);
    EXPECT_EQ(queue[0].dialect, "curator");
    EXPECT_EQ(queue[1].dialect, "zklock");
    const auto info = election.leader();
    ASSERT_TRUE(info);
    EXPECT_EQ(info->participant_id, "l");  // LeaderLatch's id is its node's data
    EXPECT_TRUE(pending(led)) << "zklock led beside LeaderLatch";

    curator->release("l");  // LeaderLatch.close()
    const auto l_leave = curator->wait_for("releasing", "l");
    ASSERT_FALSE(get_within(led->result, 60s));
    ASSERT_TRUE(l_leave);
    EXPECT_LT(*l_leave, led->at.load()) << "zklock led while LeaderLatch led";
    EXPECT_TRUE(election.is_leader());
    election.resign();
    ASSERT_TRUE(curator->wait_for("released", "l"));
    EXPECT_TRUE(curator->quit());
}

// LeaderLatch sorts names without "latch-" after its own: a latch that joins
// behind a zklock leader leads at once, beside it, with zklock's default names:
// one way only (node_names::curator writes `-latch-`: test_interop_curator_names.cpp).
TEST_F(CuratorInteropTest, ALeaderLatchDoesNotWaitForAZklockLeader) {
    const auto path = lock_path();
    auto curator = peer(path);
    auto session = connect(4000ms);
    LeaderElection election(*session, path, "zklock");
    (void)election.campaign();
    curator->latch("l");
    const auto l_enter = curator->wait_for("leader", "l");
    EXPECT_TRUE(election.is_leader());  // never resigned: two leaders at once
    const auto zk_leave = monotonic_ns();
    election.resign();
    ASSERT_TRUE(l_enter);
    EXPECT_LT(*l_enter, zk_leave);
    curator->release("l");
    ASSERT_TRUE(curator->wait_for("released", "l"));
    EXPECT_TRUE(curator->quit());
}

// InterProcessSemaphoreV2 keeps leases/ and locks/ under its path and counts
// only its own leases: zklock's Semaphore beside it would admit its own
// permits too, so it refuses the path, leaving no node.
TEST_F(CuratorInteropTest, SemaphoreRefusesAnInterProcessSemaphoreV2sPath) {
    const auto path = lock_path();
    auto curator = peer(path);
    curator->semaphore("s");
    ASSERT_TRUE(curator->wait_for("acquired", "s"));

    auto session = connect(4000ms);
    expect_refused_beside_a_peer_semaphore(*session, path, "Curator InterProcessSemaphoreV2");
    curator->release("s");
    ASSERT_TRUE(curator->wait_for("released", "s"));
    EXPECT_TRUE(curator->quit());
}

// Cooperative revocation in Curator's protocol, both ways. Curator's
// Revoker.attemptRevoke() writes "__REVOKE__" into a holder's node; a zklock
// lock made revocable lets go, one that is not keeps the lock (and the Curator
// waiter behind it, told of the change, lists and waits on).
TEST_F(CuratorInteropTest, CuratorsRevokerMakesARevocableZklockHolderLetGoAndOneThatIsNotKeepsTheLock) {
    const auto path = lock_path();
    auto curator = peer(path);
    auto session = connect(4000ms);
    auto observer = connect(4000ms);

    Mutex kept(*session, path);  // not revocable
    auto asked = std::make_shared<std::atomic<int>>(0);
    kept.on_event([asked](const lock_event& e) {
        if (e.kind == lock_event_kind::revocation_requested && !e.reason) ++*asked;
    });
    kept.lock();
    const auto kept_node = kept.node_path();
    curator->mutex("c1");
    EXPECT_EQ(curator->wait_for_line("predecessor", "c1"), names{std::filesystem::path(kept_node).filename().string()});
    // Its watch on the holder's node is set before the request is written: a
    // request written first would be read with the watch and tell it nothing.
    EXPECT_EQ(curator->wait_for_line("watching", "peer"), names{std::filesystem::path(kept_node).filename().string()});
    curator->revoke("r1", kept_node);
    ASSERT_TRUE(curator->wait_for("revoke-sent", "r1"));
    // zklock read the request and kept the lock; Curator's waiter decided again and waits on.
    ASSERT_TRUE(wait_until([&] { return asked->load() == 1; })) << "the zklock holder never read Curator's request";
    ASSERT_TRUE(wait_until([&] { return curator->lines("predecessor", "c1").size() >= 2; })) << curator->output();
    EXPECT_TRUE(kept.is_held());
    EXPECT_FALSE(curator->printed("acquired", "c1")) << "Curator acquired beside a zklock holder that kept the lock";
    const auto queue = list_contenders(*observer, path);
    ASSERT_FALSE(queue.empty());
    EXPECT_EQ(queue.front().data, "__REVOKE__");
    const auto zk_leave = monotonic_ns();
    kept.unlock();
    const auto c1_enter = curator->wait_for("acquired", "c1");
    ASSERT_TRUE(c1_enter);
    EXPECT_LT(zk_leave, *c1_enter);
    curator->release("c1");
    ASSERT_TRUE(curator->wait_for("released", "c1"));

    // Revocable: Curator's request ends the hold (errc::revoked) and its waiter gets the lock.
    MutexOptions o;
    o.revocable = true;
    Mutex yielding(*session, path, o);
    auto loss = first_loss(yielding);
    yielding.lock();
    const auto yielding_node = yielding.node_path();
    curator->mutex("c2");
    EXPECT_EQ(curator->wait_for_line("predecessor", "c2"),
              names{std::filesystem::path(yielding_node).filename().string()});
    curator->revoke("r2", yielding_node);
    EXPECT_EQ(get_within(loss), errc::revoked);
    EXPECT_FALSE(yielding.is_held());
    ASSERT_TRUE(curator->wait_for("acquired", "c2"));
    curator->release("c2");
    ASSERT_TRUE(curator->wait_for("released", "c2"));
    EXPECT_TRUE(curator->quit());
}

// zklock's request reaches Curator: an InterProcessMutex made revocable
// (makeRevocable) calls its listener, which releases; one that is not keeps
// the lock, and the zklock waiter behind it, told of the change to the node it
// watches, does not take it for a release.
TEST_F(CuratorInteropTest, ZklocksRequestMakesARevocableCuratorHolderLetGoAndOneThatIsNotKeepsTheLock) {
    const auto path = lock_path();
    auto curator = peer(path);
    auto session = connect(4000ms);
    auto waiting = connect(4000ms);
    Mutex waiter(*waiting, path);

    curator->mutex("c1");
    ASSERT_TRUE(curator->wait_for("acquired", "c1"));
    const auto c1_node = path + "/" + curator->node("acquired", "c1");
    const auto first = grant::make();
    waiter.async_lock(on_grant(first));
    EXPECT_EQ(decided_position([&] { return waiter.queue_position(); }), 1u);
    // The waiter's watch is set before the request is written (see above).
    wait_for_watcher(*waiting, c1_node);
    request_revocation(*session, c1_node);
    // The change fired the waiter's watch (the server does so before it
    // answers the write); it looked again, which set the watch anew (its read,
    // then this listing on its session, answered in order): it still waits.
    wait_for_watcher(*waiting, c1_node);
    const auto queue = list_contenders(*waiting, path);
    ASSERT_FALSE(queue.empty());
    EXPECT_EQ(queue.front().data, "__REVOKE__");
    EXPECT_TRUE(pending(first)) << "zklock took the revocation request for a release and holds beside Curator";
    EXPECT_FALSE(curator->printed("revocation-requested", "c1"));
    EXPECT_FALSE(curator->printed("releasing", "c1"));
    curator->release("c1");
    const auto c1_leave = curator->wait_for("releasing", "c1");
    ASSERT_FALSE(get_within(first->result, 60s));
    ASSERT_TRUE(c1_leave);
    EXPECT_LT(*c1_leave, first->at.load());
    waiter.unlock();

    curator->revocable("c2");
    ASSERT_TRUE(curator->wait_for("acquired", "c2"));
    const auto c2_node = path + "/" + curator->node("acquired", "c2");
    const auto second = grant::make();
    waiter.async_lock(on_grant(second));
    EXPECT_EQ(decided_position([&] { return waiter.queue_position(); }), 1u);
    EXPECT_EQ(waiter.revoke_holders(), std::vector<std::string>{c2_node});
    ASSERT_TRUE(curator->wait_for("revocation-requested", "c2"));
    const auto c2_leave = curator->wait_for("releasing", "c2");
    ASSERT_FALSE(get_within(second->result, 60s));
    ASSERT_TRUE(c2_leave);
    EXPECT_LT(*c2_leave, second->at.load());
    ASSERT_TRUE(curator->wait_for("released", "c2"));
    waiter.unlock();
    EXPECT_TRUE(curator->quit());
}

} // namespace
} // namespace zklock::test
