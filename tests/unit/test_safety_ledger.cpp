// The chaos checker: overlaps, fenced and unfenced resources, duplicate tokens.
#include <zklock/testing/safety_ledger.hpp>

#include <gtest/gtest.h>

using zklock::testing::SafetyLedger;
using namespace std::chrono_literals;

TEST(SafetyLedger, OrderlyHandoversAreClean) {
    SafetyLedger l;
    const auto t0 = SafetyLedger::clock::time_point{};
    for (int i = 1; i <= 3; ++i) {
        const auto s = l.enter("c" + std::to_string(i), 100 * i, t0 + i * 10ms);
        EXPECT_TRUE(l.write(s));
        EXPECT_TRUE(l.write(s));  // one holder writes twice under one token
        l.leave(s);
    }
    const auto sum = l.summary();
    EXPECT_EQ(sum.grants, 3u);
    EXPECT_EQ(sum.accepted, 6u);
    EXPECT_EQ(sum.refused + sum.overlaps + sum.stale_accepted_unfenced + sum.duplicate_tokens + sum.open_sections, 0u);
    EXPECT_TRUE(sum.fenced_safe());
    EXPECT_EQ(sum.longest_gap, 10ms);
    EXPECT_EQ(l.accepted_tokens(), (std::vector<std::int64_t>{100, 100, 200, 200, 300, 300}));
}

TEST(SafetyLedger, APausedHoldersLateWriteIsRefusedByTheFenceAndAcceptedByTheUnfencedCopy) {
    SafetyLedger l;
    const auto a = l.enter("a", 10);
    EXPECT_TRUE(l.write(a));
    const auto b = l.enter("b", 20);  // a was paused and lost the lock; it has not left
    EXPECT_TRUE(l.write(b));
    EXPECT_FALSE(l.write(a));          // a wakes and writes
    l.leave(a);
    l.leave(b);
    const auto sum = l.summary();
    EXPECT_EQ(sum.overlaps, 1u);
    EXPECT_EQ(sum.refused, 1u);
    EXPECT_EQ(sum.stale_accepted_unfenced, 1u);
    EXPECT_TRUE(sum.fenced_safe());
    EXPECT_NE(sum.line().find("overlaps=1 stale_unfenced=1"), std::string::npos) << sum.line();
}

TEST(SafetyLedger, TwoGrantsWithOneTokenAreCaught) {
    SafetyLedger l;
    const auto a = l.enter("a", 7);
    EXPECT_TRUE(l.write(a));
    l.leave(a);
    const auto b = l.enter("b", 7);
    EXPECT_TRUE(l.write(b));
    l.leave(b);
    EXPECT_EQ(l.summary().duplicate_tokens, 1u);
    EXPECT_FALSE(l.summary().fenced_safe());
}

TEST(SafetyLedger, OpenSectionsAreCounted) {
    SafetyLedger l;
    l.enter("a", 1);
    EXPECT_EQ(l.summary().open_sections, 1u);
}
