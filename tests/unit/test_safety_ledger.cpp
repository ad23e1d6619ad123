// The chaos checker: overlaps, fenced and unfenced resources, duplicate tokens.
#include "safety/safety_ledger.hpp"

#include <gtest/gtest.h>

using zklock::lab::SafetyLedger;
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

TEST(SafetyLedger, AnOverlapIsExplainedWhenTheEarlierHolderIsToldOfItsLoss) {
    SafetyLedger l;
    const auto a = l.enter("a", 10);
    EXPECT_TRUE(l.write(a));
    const auto b = l.enter("b", 20);  // the server gave the lock away while a was paused
    EXPECT_TRUE(l.write(b));
    EXPECT_FALSE(l.write(a));
    l.leave(a);
    EXPECT_EQ(l.summary().unexplained_overlaps, 1u) << "a released as if it still held the lock";
    EXPECT_FALSE(l.summary().safe());
    l.lost(a);  // its release found the lock gone
    l.leave(b);
    const auto sum = l.summary();
    EXPECT_EQ(sum.overlaps, 1u);
    EXPECT_EQ(sum.lost, 1u);
    EXPECT_EQ(sum.unexplained_overlaps, 0u);
    EXPECT_EQ(sum.open_sections, 0u);
    EXPECT_TRUE(sum.safe());
}

TEST(SafetyLedger, TwoHoldersNeitherToldOfALossIsUnexplained) {
    SafetyLedger l;
    const auto a = l.enter("a", 10);
    const auto b = l.enter("b", 20);  // granted without a's node being gone
    EXPECT_TRUE(l.write(b));
    l.leave(b);
    l.leave(a);
    const auto sum = l.summary();
    EXPECT_EQ(sum.overlaps, 1u);
    EXPECT_EQ(sum.unexplained_overlaps, 1u);
    EXPECT_TRUE(sum.fenced_safe()) << "the fence alone does not see it";
    EXPECT_FALSE(sum.safe());
}

TEST(SafetyLedger, ANewHolderGrantedOnAGoneSessionExplainsItsOwnOverlap) {
    SafetyLedger l;
    const auto a = l.enter("a", 10);
    const auto b = l.enter("b", 5);  // b's session had expired; it learns right after
    l.lost(b);
    l.leave(a);
    EXPECT_EQ(l.summary().unexplained_overlaps, 0u);
}

TEST(SafetyLedger, ASemaphoreLedgerAllowsPermitsHoldersAtOnce) {
    SafetyLedger l(2);
    const auto a = l.enter("a", 1);
    const auto b = l.enter("b", 2);
    EXPECT_EQ(l.summary().overlaps, 0u) << "two holders of two permits";
    const auto c = l.enter("c", 3);  // a third at once
    EXPECT_EQ(l.summary().overlaps, 1u);
    EXPECT_EQ(l.summary().unexplained_overlaps, 1u);
    l.lost(c);  // c was granted on an expired session
    EXPECT_EQ(l.summary().unexplained_overlaps, 0u);
    l.leave(a);
    l.leave(b);
    EXPECT_TRUE(l.summary().safe());
}

TEST(SafetyLedger, OneClientReenteringIsNoOverlap) {
    SafetyLedger l;
    l.enter("a", 1);
    l.enter("a", 2);  // a's own earlier section is still open (it lost it, not told yet)
    EXPECT_EQ(l.summary().overlaps, 0u);
}

// The safe-time budget: a section entered while an earlier, open section's
// holder still saw its hold as certainly safe is a violation; one entered after
// that instant is the overlap a pause causes; a session ended by force (not
// by silence) is outside the budget's rule.
TEST(SafetyLedger, AnOverlapInsideTheEarlierHoldersBudgetIsAViolation) {
    const SafetyLedger::clock::time_point t0{100s};
    {
        SafetyLedger l;
        const auto a = l.enter("a", 10, t0);
        l.budget(a, t0 + 2s, 7);
        const auto b = l.enter("b", 20, t0 + 1s);  // granted while a's budget said 1 s more
        l.lost(a, t0 + 3s);
        l.leave(b, t0 + 4s);
        const auto sum = l.summary();
        EXPECT_EQ(sum.overlaps_inside_budget, 1u);
        EXPECT_EQ(sum.budgeted, 1u);
        EXPECT_FALSE(sum.safe());
    }
    {
        SafetyLedger l;
        const auto a = l.enter("a", 10, t0);
        l.budget(a, t0 + 2s, 7);
        l.budget(a, t0 + 1500ms, 7);  // an older claim than the first: the latest instant stays
        const auto b = l.enter("b", 20, t0 + 2500ms);  // after the budget ended
        l.lost(a, t0 + 3s);
        l.leave(b, t0 + 4s);
        EXPECT_EQ(l.summary().overlaps_inside_budget, 0u);
        EXPECT_TRUE(l.summary().safe());
    }
    {
        SafetyLedger l;
        const auto a = l.enter("a", 10, t0);
        l.budget(a, t0 + 2s, 7);
        l.forced_end("a", 7);   // its session closed on the server at once
        l.budget(a, t0 + 2s, 7);  // what it still believes after: outside the rule
        const auto b = l.enter("b", 20, t0 + 1s);
        l.lost(a, t0 + 3s);
        l.leave(b, t0 + 4s);
        EXPECT_EQ(l.summary().overlaps_inside_budget, 0u);
        EXPECT_TRUE(l.summary().safe());
    }
    {
        // A client granted on its session ended by force (it read a grant made
        // to a session already gone) while the real holders' budgets ran: no
        // grant of the server's, no violation. The same client on a session
        // of its own that ended by silence: a violation.
        for (const bool forced : {true, false}) {
            SafetyLedger l(2);
            const auto a = l.enter("a", 10, t0);
            l.budget(a, t0 + 2s, 7);
            const auto b = l.enter("b", 11, t0);
            l.budget(b, t0 + 2s, 8);
            if (forced) l.forced_end("c", 9);
            const auto c = l.enter("c", 12, t0 + 1s);
            l.held_on(c, 9);
            l.lost(c, t0 + 1500ms);
            EXPECT_EQ(l.summary().overlaps_inside_budget, forced ? 0u : 1u) << (forced ? "forced" : "by silence");
        }
    }
}
