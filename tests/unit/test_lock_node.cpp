#include "fsm/lock_node.hpp"

#include "node_name_samples.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <map>
#include <set>
#include <string>
#include <string_view>

using namespace zklock::detail;
using zklock::test::names;
using zklock::test::node;

TEST(LockNode, GuidIsAVersion4Uuid) {
    const auto g = new_guid();
    ASSERT_EQ(g.size(), 36u);
    EXPECT_EQ(g[8], '-');
    EXPECT_EQ(g[13], '-');
    EXPECT_EQ(g[14], '4');
    EXPECT_TRUE(g[19] == '8' || g[19] == '9' || g[19] == 'a' || g[19] == 'b');
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(new_guid()).second);
}

TEST(LockNode, PrefixHasTheProtectedTagAndMarker) {
    EXPECT_EQ(node_name_prefix("abc"), "_c_abc-lock-");
    EXPECT_EQ(node_name_prefix("abc", "read-"), "_c_abc-read-");
}

TEST(LockNode, ParsesServerSequences) {
    EXPECT_EQ(parse_sequence("_c_x-lock-0000000000"), 0);
    EXPECT_EQ(parse_sequence("_c_x-lock-0000000042"), 42);
    EXPECT_EQ(parse_sequence("_c_x-lock-2147483647"), 2147483647);
    EXPECT_EQ(parse_sequence("_c_x-lock--2147483648"), -2147483648);
    EXPECT_EQ(parse_sequence("_c_x-lock--000000001"), -1);
    EXPECT_EQ(parse_sequence("lock-0000000007"), 7);  // Curator's unprotected names
}

TEST(LockNode, RefusesForeignNames) {
    EXPECT_FALSE(parse_sequence("config"));
    EXPECT_FALSE(parse_sequence("_c_x-lock-"));
    EXPECT_FALSE(parse_sequence("_c_x-lock-42"));
    EXPECT_FALSE(parse_sequence("_c_x-lock-00000000042"));
    EXPECT_FALSE(parse_sequence("_c_x-lock-00000000x2"));
    EXPECT_FALSE(parse_sequence("_c_x-lock-+000000042"));
    EXPECT_FALSE(parse_sequence("_c_x-read-0000000001"));
    EXPECT_FALSE(parse_sequence("_c_x-lock-9999999999"));  // out of int32 range
}

TEST(LockNode, ReadsASequenceOnlyAtTheNameEnd) {
    // A peer may write a name of any length: the sequence is read from its
    // end, after the last marker there, as from a short name.
    const std::string padding(100000, 'x');
    EXPECT_EQ(parse_sequence(padding + "-lock-0000000042"), 42);
    EXPECT_EQ(parse_sequence("_c_" + padding + "-lock-lock-0000000042"), 42);
    EXPECT_EQ(parse_sequence("lock-0000000001lock-0000000002"), 2);
    EXPECT_EQ(parse_sequence(padding + "lock--2147483648"), -2147483648);
    EXPECT_EQ(parse_sequence(padding + "lock--000000005"), -5);
    EXPECT_FALSE(parse_sequence("lock-0000000001" + padding));
    EXPECT_FALSE(parse_sequence("lock-0000000001x0000000002"));
    EXPECT_FALSE(parse_sequence("lock-000000000001"));
    EXPECT_EQ(sequence_marker_at(padding + "lock-0000000042"), padding.size());
    EXPECT_EQ(sequence_marker_at("lock-" + padding + "0000000042"), std::string_view::npos);
    EXPECT_EQ(sequence_marker_at("lock-0000000001lock-"), 15u);
}

TEST(LockNode, RefusesSequencesTheServerCannotWrite) {
    // "%010d" of -5 is "-000000005" and of 0 "0000000000": a longer or a
    // negative zero is a name written by hand (found by tests/fuzz/fuzz_node_names).
    EXPECT_FALSE(parse_sequence("_c_x-lock--0000000005"));
    EXPECT_FALSE(parse_sequence("_c_x-lock--000000000"));
    EXPECT_FALSE(parse_sequence("_c_x-lock--0000000000"));
    EXPECT_EQ(parse_sequence("_c_x-lock--1000000000"), -1000000000);
    EXPECT_EQ(parse_sequence("_c_x-lock--999999999"), -999999999);
}

TEST(LockNode, SerialOrderSurvivesTheWrap) {
    EXPECT_TRUE(sequence_before(1, 2));
    EXPECT_FALSE(sequence_before(2, 1));
    EXPECT_FALSE(sequence_before(5, 5));
    EXPECT_TRUE(sequence_before(2147483647, -2147483648));
    EXPECT_TRUE(sequence_before(2147483600, -2147483600));
    EXPECT_FALSE(sequence_before(-2147483648, 2147483647));
}

TEST(LockNode, SortsByServerSequenceNotByName) {
    // Guids sort differently from sequences: order must come from the suffix only.
    const std::vector<std::string> children{node("ffff", 3), node("0000", 7), node("aaaa", 1), node("5555", 2)};
    EXPECT_EQ(names(sorted_contenders(children)),
              (std::vector<std::string>{node("aaaa", 1), node("5555", 2), node("ffff", 3), node("0000", 7)}));
}

TEST(LockNode, SortsAcrossTheWrap) {
    const std::vector<std::string> children{node("c", -2147483647), node("a", 2147483646), node("d", -2147483000),
                                            node("b", -2147483648), node("z", 2147483647)};
    EXPECT_EQ(names(sorted_contenders(children)),
              (std::vector<std::string>{node("a", 2147483646), node("z", 2147483647), node("b", -2147483648),
                                        node("c", -2147483647), node("d", -2147483000)}));
}

TEST(LockNode, IgnoresChildrenThatAreNotContenders) {
    const std::vector<std::string> children{"leases", node("a", 2), "locks", node("b", 1), "lock-", "_c_q-lock-42"};
    EXPECT_EQ(names(sorted_contenders(children)), (std::vector<std::string>{node("b", 1), node("a", 2)}));
}

TEST(LockNode, FindsOurNodeByGuid) {
    const std::vector<std::string> children{node("aaaa", 1), node("bbbb", 2)};
    EXPECT_EQ(find_by_guid(children, "bbbb"), node("bbbb", 2));
    EXPECT_FALSE(find_by_guid(children, "cccc"));
}

TEST(QueueDecision, LowestHoldsTheMutex) {
    const auto sorted = sorted_contenders({node("a", 1), node("b", 2), node("c", 3)});
    const auto d = decide(sorted, node("a", 1));
    EXPECT_TRUE(d.found);
    EXPECT_TRUE(d.acquired);
    EXPECT_EQ(d.position, 0u);
    EXPECT_TRUE(d.watch.empty());
}

TEST(QueueDecision, WaiterWatchesOnlyItsImmediatePredecessor) {
    const auto sorted = sorted_contenders({node("a", 1), node("b", 2), node("c", 3), node("d", 4)});
    const auto d = decide(sorted, node("c", 3));
    EXPECT_FALSE(d.acquired);
    EXPECT_EQ(d.position, 2u);
    EXPECT_EQ(d.watch, std::vector<std::string>{node("b", 2)});
    EXPECT_FALSE(d.watch_is_last_blocker);
    const auto second = decide(sorted, node("b", 2));
    EXPECT_EQ(second.watch, std::vector<std::string>{node("a", 1)});
    EXPECT_TRUE(second.watch_is_last_blocker);
}

TEST(QueueDecision, EveryWaiterWatchesADifferentNode) {
    // No herd: a release (deletion of one node) wakes exactly one waiter.
    std::vector<std::string> children;
    for (int i = 0; i < 50; ++i) children.push_back(node("g" + std::to_string(i), 100 + i));
    std::shuffle(children.begin(), children.end(), std::mt19937(7));
    const auto sorted = sorted_contenders(children);
    std::set<std::string> watched;
    for (const auto& n : sorted) {
        const auto d = decide(sorted, n.name);
        for (const auto& w : d.watch) EXPECT_TRUE(watched.insert(w).second) << w << " watched twice";
    }
    EXPECT_EQ(watched.size(), 49u);
}

TEST(QueueDecision, MissingNodeIsReported) {
    const auto sorted = sorted_contenders({node("a", 1)});
    EXPECT_FALSE(decide(sorted, node("zzz", 9)).found);
}

TEST(QueueDecision, PermitsGrantTheFirstKAndWatchTheKNodesAhead) {
    const auto sorted = sorted_contenders({node("a", 1), node("b", 2), node("c", 3), node("d", 4), node("e", 5)});
    EXPECT_TRUE(decide(sorted, node("c", 3), 3).acquired);
    const auto d = decide(sorted, node("d", 4), 3);
    EXPECT_FALSE(d.acquired);
    EXPECT_EQ(d.watch, (std::vector<std::string>{node("a", 1), node("b", 2), node("c", 3)}));
    EXPECT_TRUE(d.watch_is_last_blocker);
    const auto e = decide(sorted, node("e", 5), 3);
    EXPECT_EQ(e.watch, (std::vector<std::string>{node("b", 2), node("c", 3), node("d", 4)}));
    EXPECT_FALSE(e.watch_is_last_blocker);
}

TEST(QueueDecision, AHolderReleasedOutOfOrderWakesTheWaiterItFrees) {
    // K = 2: a and b hold, c waits. b leaves first: c must be watching b.
    auto sorted = sorted_contenders({node("a", 1), node("b", 2), node("c", 3)});
    const auto c = decide(sorted, node("c", 3), 2);
    EXPECT_NE(std::find(c.watch.begin(), c.watch.end(), node("b", 2)), c.watch.end());
    EXPECT_TRUE(c.watch_is_last_blocker);
    sorted = sorted_contenders({node("a", 1), node("c", 3)});
    EXPECT_TRUE(decide(sorted, node("c", 3), 2).acquired);
}

TEST(QueueDecision, InOrderReleasesWakeOneWaiter) {
    // K = 3 and six waiters: each node is watched by the waiters up to K behind it,
    // but the first holder (the one that leaves first in FIFO order) by one waiter only.
    std::vector<std::string> children;
    for (int i = 0; i < 9; ++i) children.push_back(node("g" + std::to_string(i), i));
    const auto sorted = sorted_contenders(children);
    std::map<std::string, int> watchers;
    for (const auto& n : sorted)
        for (const auto& w : decide(sorted, n.name, 3).watch) ++watchers[w];
    EXPECT_EQ(watchers[sorted[0].name], 1);
    EXPECT_EQ(watchers[sorted[2].name], 3);
}

// A listing one session's contenders share (fsm/listing_batches.hpp) is sorted
// once, and each finds its node in it by sequence: every decision must be the
// one a listing of its own gives, whatever the rule, across the wrap, with
// peers' readers and writers and children that are not contenders.
TEST(QueueDecision, ADecisionOnASharedListingIsTheOneAListingOfItsOwnGives) {
    std::vector<std::string> children{"leases", "lock-", zklock::test::seq(5)};
    for (int i = 0; i < 40; ++i) {
        const auto s = static_cast<std::int32_t>(2147483627u + static_cast<unsigned>(i));  // wraps past 2147483647
        const auto tag = "t" + std::to_string(i);
        children.push_back(i % 5 == 3 ? node_name_prefix(tag, read_marker) + zklock::test::seq(s)
                           : i % 7 == 2 ? node_name_prefix(tag, write_marker) + zklock::test::seq(s)
                                        : node(tag, s));
    }
    std::shuffle(children.begin(), children.end(), std::mt19937(11));
    const auto sorted = sorted_contenders(children);
    ASSERT_EQ(sorted.size(), 40u);

    const children_listing shared(children);
    queue_rule mutex, semaphore, read_write;
    semaphore.permits = 3;
    read_write.read_write = true;
    for (const auto& n : sorted) {
        for (const auto* rule : {&mutex, &semaphore}) {
            const auto own = decide(sorted, n.name, rule->permits);
            const auto d = decide(*rule, shared, n.name);
            EXPECT_EQ(d.found, own.found) << n.name;
            EXPECT_EQ(d.acquired, own.acquired) << n.name;
            EXPECT_EQ(d.position, own.position) << n.name;
            EXPECT_EQ(d.watch, own.watch) << n.name;
            EXPECT_EQ(d.watch_is_last_blocker, own.watch_is_last_blocker) << n.name;
            EXPECT_EQ(d.last, own.last) << n.name;
        }
        const auto own = decide_read_write(sorted, n.name);
        const auto d = decide(read_write, shared, n.name);
        EXPECT_EQ(d.acquired, own.acquired) << n.name;
        EXPECT_EQ(d.position, own.position) << n.name;
        EXPECT_EQ(d.watch, own.watch) << n.name;
    }
    // A node that is not in the listing, with a sequence that is.
    EXPECT_FALSE(decide(mutex, shared, node("gone", 2147483630)).found);
    EXPECT_FALSE(decide(mutex, shared, "not-a-contender").found);
    // Sorted once: every decision read the same order.
    EXPECT_EQ(&shared.sorted(), &shared.sorted());
    EXPECT_EQ(sorted.front().name, shared.sorted().front().name);
}

// Sequences spread over more than 2^31 have no consistent order (a
// hand-written name, a holder from before the counter wrapped far past it):
// each node of a shared listing is still found, as by a listing of its own.
TEST(QueueDecision, ANodeOfAListingWithoutAConsistentOrderIsStillFound) {
    std::vector<std::string> children;  // all around the counter's circle: each is before the next
    for (std::uint32_t k = 0; k < 16; ++k) children.push_back(node("n" + std::to_string(k), static_cast<std::int32_t>(k << 28)));
    const children_listing shared(children);
    const queue_rule mutex;
    for (const auto& name : children) EXPECT_TRUE(decide(mutex, shared, name).found) << name;
}
