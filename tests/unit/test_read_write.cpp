#include "fsm/lock_node.hpp"

#include <gtest/gtest.h>

using namespace zklock::detail;

namespace {
std::string node(std::string_view guid, std::string_view marker, std::int32_t seq) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%010d", seq);
    return node_name_prefix(guid, marker) + buf;
}
std::string w(std::string_view g, std::int32_t s) { return node(g, write_marker, s); }
std::string r(std::string_view g, std::int32_t s) { return node(g, read_marker, s); }
} // namespace

TEST(ReadWrite, SortsWritersAndReadersInOneQueueAndIgnoresOthers) {
    const auto sorted = sorted_contenders({r("b", 2), w("a", 1), "junk", w("d", 3)});
    ASSERT_EQ(sorted.size(), 3u);
    EXPECT_EQ(sorted[0].name, w("a", 1));
    EXPECT_FALSE(sorted[0].shared);
    EXPECT_EQ(sorted[1].name, r("b", 2));
    EXPECT_TRUE(sorted[1].shared);
    EXPECT_EQ(sorted[2].name, w("d", 3));
}

TEST(ReadWrite, AMutexNodeIsAWriter) {
    // A Mutex on the same path holds alone: readers behind it wait, and it is not one of them.
    const auto sorted = sorted_contenders({node("c", lock_marker, 0), r("b", 2)});
    ASSERT_EQ(sorted.size(), 2u);
    EXPECT_FALSE(sorted[0].shared);
    const auto d = decide_read_write(sorted, r("b", 2));
    EXPECT_FALSE(d.acquired);
    EXPECT_EQ(d.watch, std::vector<std::string>{node("c", lock_marker, 0)});
}

TEST(ReadWrite, ReadersShareWhenNoWriterIsAhead) {
    const auto sorted = sorted_contenders({r("a", 1), r("b", 2), r("c", 3)});
    for (const auto& n : sorted) EXPECT_TRUE(decide_read_write(sorted, n.name).acquired) << n.name;
}

TEST(ReadWrite, WriterNeedsToBeFirstAndWatchesItsPredecessor) {
    const auto sorted = sorted_contenders({r("a", 1), r("b", 2), w("c", 3)});
    const auto d = decide_read_write(sorted, w("c", 3));
    EXPECT_FALSE(d.acquired);
    EXPECT_EQ(d.position, 2u);
    EXPECT_EQ(d.watch, std::vector<std::string>{r("b", 2)});
    EXPECT_FALSE(d.watch_is_last_blocker);
    const auto first = sorted_contenders({w("c", 3)});
    EXPECT_TRUE(decide_read_write(first, w("c", 3)).acquired);
}

TEST(ReadWrite, ReaderAfterAWriterWaitsForTheNearestWriterAhead) {
    // r1 w2 r3 w4 r5: r3 waits for w2 only, r5 for w4 only; no writer starves.
    const auto sorted = sorted_contenders({r("a", 1), w("b", 2), r("c", 3), w("d", 4), r("e", 5)});
    EXPECT_TRUE(decide_read_write(sorted, r("a", 1)).acquired);
    const auto c = decide_read_write(sorted, r("c", 3));
    EXPECT_FALSE(c.acquired);
    EXPECT_EQ(c.watch, std::vector<std::string>{w("b", 2)});
    EXPECT_TRUE(c.watch_is_last_blocker);
    const auto e = decide_read_write(sorted, r("e", 5));
    EXPECT_FALSE(e.acquired);
    EXPECT_EQ(e.watch, std::vector<std::string>{w("d", 4)});
    EXPECT_FALSE(e.watch_is_last_blocker);  // w2 is ahead of w4 too
    const auto d = decide_read_write(sorted, w("d", 4));
    EXPECT_EQ(d.watch, std::vector<std::string>{r("c", 3)});
}

TEST(ReadWrite, RuleDispatch) {
    queue_rule rw;
    rw.read_write = true;
    EXPECT_TRUE(decide(rw, {r("a", 1), r("b", 2)}, r("b", 2)).acquired);
    queue_rule sem;
    sem.permits = 2;
    EXPECT_TRUE(decide(sem, {node("a", lock_marker, 1), node("b", lock_marker, 2)}, node("b", lock_marker, 2)).acquired);
    queue_rule mutex;
    EXPECT_FALSE(decide(mutex, {node("a", lock_marker, 1), node("b", lock_marker, 2)}, node("b", lock_marker, 2)).acquired);
}

TEST(ReadWrite, TheQueueHoldsEveryRecipesNodes) {
    const auto sorted = sorted_contenders({w("a", 3), node("b", lock_marker, 1), r("c", 2), "other"});
    ASSERT_EQ(sorted.size(), 3u);
    EXPECT_EQ(sorted[0].name, node("b", lock_marker, 1));
    EXPECT_TRUE(sorted[1].shared);
    EXPECT_EQ(sorted[2].name, w("a", 3));
}
