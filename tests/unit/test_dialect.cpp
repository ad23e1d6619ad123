// Peer dialects: every peer recipe's contender names are read as contenders,
// ordered by sequence, and block zklock's waiters (src/fsm/dialect.hpp).
#include "fsm/dialect.hpp"
#include "fsm/lock_node.hpp"

#include "node_name_samples.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace zklock::detail;
using zklock::test::hex32;
using zklock::test::names;
using zklock::test::seq;
using zklock::test::uuid;

namespace {
// The names each peer creates (checked against their sources: kazoo 2.8
// recipe/lock.py, Curator's LockInternals / LeaderLatch / InterProcessReadWriteLock
// with protection, go-zookeeper's CreateProtectedEphemeralSequential, the C
// recipe's "x-%016llx-").
std::string zklock_lock(std::int32_t s) { return node_name_prefix(uuid) + seq(s); }
std::string zklock_write(std::int32_t s) { return node_name_prefix(uuid, write_marker) + seq(s); }
std::string zklock_read(std::int32_t s) { return node_name_prefix(uuid, read_marker) + seq(s); }
std::string kazoo_lock(std::int32_t s) { return hex32 + "__lock__" + seq(s); }
std::string kazoo_rlock(std::int32_t s) { return hex32 + "__rlock__" + seq(s); }
std::string curator_latch(std::int32_t s) { return "_c_" + uuid + "-latch-" + seq(s); }
std::string curator_read(std::int32_t s) { return "_c_" + uuid + "-__READ__" + seq(s); }
std::string curator_write(std::int32_t s) { return "_c_" + uuid + "-__WRIT__" + seq(s); }
std::string go_lock(std::int32_t s) { return "_c_" + hex32 + "-lock-" + seq(s); }
std::string c_lock(std::int32_t s) { return "x-0000018bcd12ef34-" + seq(s); }

std::vector<std::string> every_exclusive_peer_node(std::int32_t s) {
    return {kazoo_lock(s), curator_latch(s), curator_write(s), go_lock(s), c_lock(s), "lock-" + seq(s)};
}
} // namespace

TEST(Dialect, RecognisesEveryPeersNames) {
    struct expected {
        std::string name;
        dialect who;
        contender_kind kind;
        bool lock_form;
    };
    const std::vector<expected> cases{
        {zklock_lock(7), dialect::zklock, contender_kind::exclusive, true},
        {zklock_write(7), dialect::zklock, contender_kind::exclusive, false},
        {zklock_read(7), dialect::zklock, contender_kind::shared, false},
        {kazoo_lock(7), dialect::kazoo, contender_kind::exclusive, false},
        {kazoo_rlock(7), dialect::kazoo, contender_kind::shared, false},
        {curator_latch(7), dialect::curator, contender_kind::exclusive, false},
        {curator_read(7), dialect::curator, contender_kind::shared, false},
        {curator_write(7), dialect::curator, contender_kind::exclusive, false},
        {"lock-" + seq(7), dialect::curator, contender_kind::exclusive, true},
        {go_lock(7), dialect::go_zookeeper, contender_kind::exclusive, true},
        {c_lock(7), dialect::c_recipe, contender_kind::exclusive, false},
        {"job-lock-" + seq(7), dialect::lock_suffix, contender_kind::exclusive, true},
    };
    for (const auto& c : cases) {
        const auto r = recognise(c.name);
        ASSERT_TRUE(r) << c.name;
        EXPECT_EQ(r->sequence, 7) << c.name;
        EXPECT_EQ(r->dialect, c.who) << c.name;
        EXPECT_EQ(r->kind, c.kind) << c.name;
        EXPECT_EQ(r->lock_form, c.lock_form) << c.name;
    }
}

TEST(Dialect, ReadsSequencesPastTheWrapInEveryDialect) {
    for (const auto& name : std::vector<std::string>{kazoo_lock(-2147483648), kazoo_rlock(-1), curator_latch(-5),
                                                     curator_read(-2147483648), go_lock(-1), c_lock(-2147483648),
                                                     c_lock(-1)}) {
        const auto r = recognise(name);
        ASSERT_TRUE(r) << name;
        EXPECT_LT(r->sequence, 0) << name;
    }
    EXPECT_EQ(recognise(c_lock(-1))->sequence, -1);
}

TEST(Dialect, ChildrenNoDialectRecognisesAreForeign) {
    const std::vector<std::string> foreign{"leases", "locks", "config", "lock-", "_c_" + uuid + "-lock-",
                                           hex32 + "__lock__42", hex32 + "__lock__", "x-123-" + seq(1),
                                           "x-0000018bcd12ef34-", "x-0000018bcd12eg34-" + seq(1),
                                           "y-0000018bcd12ef34-" + seq(1), curator_latch(1) + "x",
                                           "_c_" + uuid + "-__read__" + seq(1), hex32 + "__rlock__9999999999"};
    for (const auto& name : foreign)
        EXPECT_FALSE(recognise(name)) << name;
}

TEST(Dialect, ZklocksOwnNamesAreUnchanged) {
    EXPECT_EQ(node_name_prefix("g"), "_c_g-lock-");
    EXPECT_EQ(node_name_prefix("g", write_marker), "_c_g-write-");
    EXPECT_EQ(node_name_prefix("g", read_marker), "_c_g-read-");
    EXPECT_EQ(recognise(node_name_prefix(new_guid()) + seq(1))->dialect, dialect::zklock);
}

TEST(Dialect, Names) {
    EXPECT_EQ(dialect_name(dialect::zklock), "zklock");
    EXPECT_EQ(dialect_name(dialect::curator), "curator");
    EXPECT_EQ(dialect_name(dialect::kazoo), "kazoo");
    EXPECT_EQ(dialect_name(dialect::go_zookeeper), "go-zookeeper");
    EXPECT_EQ(dialect_name(dialect::c_recipe), "c-recipe");
    EXPECT_EQ(dialect_name(dialect::lock_suffix), "lock-suffix");
    EXPECT_EQ(kind_name(contender_kind::shared), "shared");
    EXPECT_EQ(kind_name(contender_kind::exclusive), "exclusive");
}

TEST(Dialect, MixedQueueSortsBySequenceAcrossTheWrap) {
    // The guids and markers sort differently from the sequences, and the counter
    // wrapped between the third and the fourth: serial-number order only.
    const std::vector<std::string> children{c_lock(-2147483647), kazoo_rlock(2147483646), "leases",
                                            zklock_lock(-2147483648), curator_latch(2147483645), go_lock(2147483647),
                                            kazoo_lock(-2147483000)};
    EXPECT_EQ(names(sorted_contenders(children)),
              (std::vector<std::string>{curator_latch(2147483645), kazoo_rlock(2147483646), go_lock(2147483647),
                                        zklock_lock(-2147483648), c_lock(-2147483647), kazoo_lock(-2147483000)}));
}

TEST(Dialect, AMutexWaiterQueuesBehindEveryPeersNode) {
    std::vector<std::string> peers = every_exclusive_peer_node(1);
    peers.push_back(kazoo_rlock(1));
    peers.push_back(curator_read(1));
    for (const auto& peer : peers) {
        const auto d = decide(queue_rule{}, {zklock_lock(2), peer}, zklock_lock(2));
        EXPECT_TRUE(d.found) << peer;
        EXPECT_FALSE(d.acquired) << peer;
        EXPECT_EQ(d.watch, std::vector<std::string>{peer});
        EXPECT_TRUE(d.watch_is_last_blocker) << peer;
        // ... and holds ahead of a peer that came later.
        EXPECT_TRUE(decide(queue_rule{}, {zklock_lock(2), every_exclusive_peer_node(3)[0]}, zklock_lock(2)).acquired);
    }
}

TEST(Dialect, SharedMutexReadsPeerReadersAndWriters) {
    queue_rule rw;
    rw.read_write = true;
    for (const auto& reader : std::vector<std::string>{kazoo_rlock(1), curator_read(1)}) {
        EXPECT_TRUE(decide(rw, {reader, zklock_read(2)}, zklock_read(2)).acquired) << reader;  // readers share
        const auto writer = decide(rw, {reader, zklock_write(2)}, zklock_write(2));
        EXPECT_FALSE(writer.acquired) << reader;
        EXPECT_EQ(writer.watch, std::vector<std::string>{reader});
    }
    for (const auto& writer : every_exclusive_peer_node(1)) {
        const auto reader = decide(rw, {writer, zklock_read(2)}, zklock_read(2));
        EXPECT_FALSE(reader.acquired) << writer;
        EXPECT_EQ(reader.watch, std::vector<std::string>{writer});
        EXPECT_FALSE(decide(rw, {writer, zklock_write(2)}, zklock_write(2)).acquired) << writer;
    }
    // A peer writer queued behind our reader does not hold it back (writers do not
    // block readers ahead of them).
    EXPECT_TRUE(decide(rw, {zklock_read(1), kazoo_lock(2)}, zklock_read(1)).acquired);
}

TEST(Dialect, SemaphoreCountsItsOwnNodesAndWaitsForAnyOtherContender) {
    queue_rule sem;
    sem.permits = 3;
    EXPECT_TRUE(decide(sem, {zklock_lock(1), go_lock(2), zklock_lock(3)}, zklock_lock(3)).acquired);
    for (const auto& peer :
         std::vector<std::string>{kazoo_lock(2), kazoo_rlock(2), curator_latch(2), curator_read(2), c_lock(2)}) {
        const auto d = decide(sem, {zklock_lock(1), peer, zklock_lock(3)}, zklock_lock(3));
        EXPECT_FALSE(d.acquired) << peer;
        EXPECT_EQ(d.watch, std::vector<std::string>{peer});  // the nearest blocker, not every node ahead
        EXPECT_TRUE(d.watch_is_last_blocker) << peer;
    }
    // Two blockers ahead: the nearer one's deletion alone does not grant.
    const auto two = decide(sem, {kazoo_lock(1), c_lock(2), zklock_lock(3)}, zklock_lock(3));
    EXPECT_EQ(two.watch, std::vector<std::string>{c_lock(2)});
    EXPECT_FALSE(two.watch_is_last_blocker);
    // K or more ahead: the K nodes just ahead as before, but a blocker among them
    // means a deletion may not grant: list again.
    const auto full = decide(sem, {kazoo_lock(1), zklock_lock(2), zklock_lock(3), zklock_lock(4)}, zklock_lock(4));
    EXPECT_FALSE(full.acquired);
    EXPECT_EQ(full.watch, (std::vector<std::string>{kazoo_lock(1), zklock_lock(2), zklock_lock(3)}));
    EXPECT_FALSE(full.watch_is_last_blocker);
}

TEST(Dialect, PeerSemaphoreLayoutsAreRecognisedAndNothingElseIs) {
    // Curator's InterProcessSemaphoreV2 keeps leases/ and locks/ under its path.
    for (const std::string child : {"leases", "locks"}) {
        const auto what = foreign_semaphore_children({zklock_lock(1), child});
        ASSERT_TRUE(what) << child;
        EXPECT_NE(what->find("Curator InterProcessSemaphoreV2"), std::string::npos) << *what;
    }
    // kazoo's Semaphore: a lease per holder named by a bare uuid hex, the count as the path's data.
    const auto lease = foreign_semaphore_children({"0123456789abcdef0123456789abcdef"});
    ASSERT_TRUE(lease);
    EXPECT_NE(lease->find("kazoo Semaphore"), std::string::npos) << *lease;
    ASSERT_TRUE(foreign_semaphore_data("2"));
    EXPECT_NE(foreign_semaphore_data("2")->find("kazoo Semaphore"), std::string::npos);
    // Every lock dialect zklock queues with, and zklock's own data, are not a peer semaphore.
    EXPECT_FALSE(foreign_semaphore_children({zklock_lock(1), go_lock(2), kazoo_lock(3), kazoo_rlock(4),
                                             curator_latch(5), curator_read(6), c_lock(7), "lease", "locks2",
                                             "0123456789abcdef0123456789abcde"}));
    EXPECT_FALSE(foreign_semaphore_data("permits=2"));
    EXPECT_FALSE(foreign_semaphore_data(""));
    EXPECT_FALSE(foreign_semaphore_data("12345678901"));  // not a 32-bit count
}
