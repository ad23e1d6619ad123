// The chaos engine's pure parts: seeds, fault schedules, verdicts.
#include "chaos/chaos.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace zt = zklock::lab;
using namespace std::chrono_literals;

TEST(ChaosSeed, ParsesDecimalSeedsOnly) {
    EXPECT_EQ(zt::parse_chaos_seed("0"), 0u);
    EXPECT_EQ(zt::parse_chaos_seed("18446744073709551615"), 18446744073709551615u);
    EXPECT_FALSE(zt::parse_chaos_seed("18446744073709551616"));
    EXPECT_FALSE(zt::parse_chaos_seed(""));
    EXPECT_FALSE(zt::parse_chaos_seed("-1"));
    EXPECT_FALSE(zt::parse_chaos_seed("+1"));
    EXPECT_FALSE(zt::parse_chaos_seed("12 "));
    EXPECT_FALSE(zt::parse_chaos_seed("0x10"));
}

TEST(ChaosSeed, TheEnvironmentReplaysARun) {
    ::setenv(zt::chaos_seed_variable, "4242", 1);
    EXPECT_EQ(zt::chaos_seed(), 4242u);
    EXPECT_EQ(zt::describe_seed(4242), "chaos seed 4242 (replay: ZKLOCK_CHAOS_SEED=4242)");
    ::setenv(zt::chaos_seed_variable, "many", 1);
    EXPECT_THROW(zt::chaos_seed(), std::invalid_argument);
    ::unsetenv(zt::chaos_seed_variable);
    EXPECT_NE(zt::chaos_seed(), zt::chaos_seed()) << "fresh seeds differ (2^-64 odds of a false alarm)";
}

TEST(ChaosSchedule, OneSeedOneSchedule) {
    zt::chaos_schedule_options o;
    const auto a = zt::chaos_schedule(7, o, 50);
    EXPECT_EQ(a, zt::chaos_schedule(7, o, 50));
    EXPECT_NE(a, zt::chaos_schedule(8, o, 50));
    // The first steps of seed 7 are fixed by mt19937_64 and modulo draws, on any
    // standard library: a replay elsewhere runs the same faults.
    EXPECT_EQ(zt::describe(a[0]), "kill_leader node 0 for 3863 ms, then 2702 ms quiet");
    EXPECT_EQ(zt::describe(a[1]), "reset_client client 0, then 936 ms quiet");
    EXPECT_EQ(zt::describe(a[2]), "expire_session client 3, then 2635 ms quiet");
}

TEST(ChaosSchedule, StepsStayWithinTheOptions) {
    zt::chaos_schedule_options o;
    o.clients = 4;
    o.nodes = 3;
    o.min_duration = 100ms;
    o.max_duration = 200ms;
    o.min_quiet = 10ms;
    o.max_quiet = 20ms;
    for (const auto& s : zt::chaos_schedule(1, o, 500)) {
        const bool instant = s.fault == zt::chaos_fault::reset_client || s.fault == zt::chaos_fault::drop_create_reply ||
                             s.fault == zt::chaos_fault::expire_session ||
                             s.fault == zt::chaos_fault::garble_create_reply;
        if (instant) EXPECT_EQ(s.duration, 0ms) << zt::describe(s);
        else EXPECT_TRUE(s.duration >= 100ms && s.duration <= 200ms) << zt::describe(s);
        EXPECT_TRUE(s.quiet >= 10ms && s.quiet <= 20ms) << zt::describe(s);
        EXPECT_LT(s.target, 4u);
    }
}

TEST(ChaosSchedule, LeavesOutWhatCannotRun) {
    zt::chaos_schedule_options o;
    o.without_iptables();
    o.nodes = 1;
    for (const auto& s : zt::chaos_schedule(3, o, 500)) {
        EXPECT_NE(s.fault, zt::chaos_fault::blackhole_client);
        EXPECT_NE(s.fault, zt::chaos_fault::partition_leader);
        EXPECT_NE(s.fault, zt::chaos_fault::kill_follower) << "a standalone server has no follower";
    }
    zt::chaos_schedule_options none;
    none.faults = {zt::chaos_fault::partition_leader};
    none.nodes = 1;
    EXPECT_THROW(zt::chaos_schedule(1, none, 1), std::invalid_argument);
}

TEST(ChaosSchedule, EveryFaultIsDrawnSometimes) {
    zt::chaos_schedule_options o;
    const auto steps = zt::chaos_schedule(11, o, 1000);
    for (const auto f : zt::all_chaos_faults())
        EXPECT_TRUE(std::any_of(steps.begin(), steps.end(), [f](const auto& s) { return s.fault == f; }))
            << zt::to_string(f);
}

TEST(ChaosVerdict, ACleanRunPasses) {
    zt::chaos_outcome o;
    o.summary.grants = 10;
    o.summary.accepted = 20;
    o.summary.overlaps = 2;  // explained by losses
    o.summary.lost = 2;
    EXPECT_TRUE(zt::chaos_violations(o).empty());
    EXPECT_EQ(zt::chaos_line(o),
              "faults=0 grants=10 accepted=20 refused=0 overlaps=2 unexplained_overlaps=0 lost=2 stale_unfenced=0 "
              "duplicate_tokens=0 longest_gap_ms=0 leftovers=0 hung=0 stalled=0 budgeted=0 inside_budget=0");
}

TEST(ChaosVerdict, EveryBrokenConditionIsNamed) {
    const auto broken = [](auto change) {
        zt::chaos_outcome o;
        change(o);
        return zt::chaos_violations(o);
    };
    EXPECT_EQ(broken([](auto& o) { o.summary.duplicate_tokens = 1; }).size(), 1u);
    EXPECT_EQ(broken([](auto& o) { o.summary.out_of_order_accepts = 1; }).size(), 1u);
    EXPECT_EQ(broken([](auto& o) { o.summary.interleaved_accepts = 1; }).size(), 1u);
    EXPECT_EQ(broken([](auto& o) { o.summary.unexplained_overlaps = 1; }).size(), 1u);
    EXPECT_EQ(broken([](auto& o) { o.summary.open_sections = 1; }).size(), 1u);
    EXPECT_EQ(broken([](auto& o) { o.summary.overlaps_inside_budget = 1; }).size(), 1u);
    EXPECT_EQ(broken([](auto& o) {
                  o.leftovers = 1;
                  o.leftover_nodes = {"_c_x-lock-0000000001"};
              })[0],
              "1 lock node(s) left after every client released: _c_x-lock-0000000001");
    EXPECT_EQ(broken([](auto& o) { o.hung = {"c1 (in acquire)"}; })[0], "client(s) hung past a deadline: c1 (in acquire)");
    EXPECT_EQ(broken([](auto& o) { o.stalled = {"c2", "c3"}; }).size(), 1u);
    EXPECT_EQ(broken([](auto& o) { o.failed_acquires = {"c1: connection loss x1"}; }).size(), 1u);
    EXPECT_EQ(broken([](auto& o) { o.wrong_losses = {"c1: node deleted x1"}; }).size(), 1u);
    // Overlaps alone (a paused holder) and refusals (its late write) are what faults do: no violation.
    EXPECT_TRUE(broken([](auto& o) {
                    o.summary.overlaps = 3;
                    o.summary.refused = 3;
                    o.summary.stale_accepted_unfenced = 3;
                }).empty());
}

TEST(ChaosNeedle, MatchesACreateOfALockNodeOnly) {
    const auto needle = zt::lock_create_needle();
    // A create request: the path "..._c_<guid>-lock-", then the data's length (big endian) and data.
    const std::string create = std::string("/l/_c_0f-lock-") + std::string("\0\0\0\x0a", 4) + "host:12345";
    const std::string get_data = std::string("/l/_c_0f-lock-0000000007") + std::string("\x01", 1);
    EXPECT_NE(create.find(needle), std::string::npos);
    EXPECT_EQ(get_data.find(needle), std::string::npos);
}
