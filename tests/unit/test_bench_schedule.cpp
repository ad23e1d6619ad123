// zklock bench's account of its own threads' scheduling
// (lab/runs/client_schedule.cpp): the schedstat line, and the
// figures per cycle between two readings.
#include "runs/client_schedule.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace zklock::cli {
namespace {

TEST(BenchSchedule, ReadsTheThreeNumbersOfASchedstatLine) {
    const auto s = parse_schedstat("5230000 120000 17\n");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->cpu_ns, 5230000u);
    EXPECT_EQ(s->wait_ns, 120000u);
    EXPECT_EQ(s->runs, 17u);
    EXPECT_TRUE(parse_schedstat("1 2 3"));
}

TEST(BenchSchedule, RefusesALineThatIsNotThreeNumbers) {
    for (const char* line : {"", "1 2", "1 2 x", "1 2 3 4", "-1 2 3", "1,2,3"}) EXPECT_FALSE(parse_schedstat(line)) << line;
}

TEST(BenchSchedule, CountsPerCycleTheThreadsReadBothTimes) {
    const process_schedule before = {{10, {1'000'000, 500'000, 100}}, {11, {2'000'000, 0, 10}}, {12, {9, 9, 9}}};
    const process_schedule after = {
        {10, {3'000'000, 900'000, 300}},  // +2 ms on a CPU, +0.4 ms waiting, +200 runs
        {11, {4'000'000, 600'000, 210}},  // +2 ms, +0.6 ms, +200
        {13, {7'000'000, 7'000'000, 700}},  // started since: its time is not all the loop's
    };  // 12 ended: not counted
    const auto j = schedule_per_cycle(before, after, 100);
    ASSERT_TRUE(j.is_object());
    EXPECT_DOUBLE_EQ(j["client_cpu_us_per_cycle"].get<double>(), 40.0);
    EXPECT_DOUBLE_EQ(j["client_wait_us_per_cycle"].get<double>(), 10.0);
    EXPECT_DOUBLE_EQ(j["client_runs_per_cycle"].get<double>(), 4.0);
}

TEST(BenchSchedule, SkipsAThreadNumberReusedByAYoungerThread) {
    const process_schedule before = {{10, {1'000'000, 500'000, 100}}, {20, {5'000'000, 5'000'000, 50}}};
    const process_schedule after = {{10, {2'000'000, 500'000, 200}}, {20, {1'000, 1'000, 1}}};
    const auto j = schedule_per_cycle(before, after, 10);
    ASSERT_TRUE(j.is_object());
    EXPECT_DOUBLE_EQ(j["client_cpu_us_per_cycle"].get<double>(), 100.0);
    EXPECT_DOUBLE_EQ(j["client_runs_per_cycle"].get<double>(), 10.0);
}

TEST(BenchSchedule, IsNullWithoutCyclesOrWithoutAThreadInBothReadings) {
    const process_schedule one = {{10, {1, 1, 1}}};
    EXPECT_TRUE(schedule_per_cycle(one, one, 0).is_null());
    EXPECT_TRUE(schedule_per_cycle(one, {{11, {5, 5, 5}}}, 10).is_null());
    EXPECT_TRUE(schedule_per_cycle({}, {}, 10).is_null());
}

TEST(BenchSchedule, ThisProcessHasItsThreadsTimeOnACpu) {
    // The calling thread works between the readings: its time on a CPU shows.
    const auto before = read_process_schedule();
    ASSERT_FALSE(before.empty());
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < spin_until) {
    }
    const auto after = read_process_schedule();
    const auto j = schedule_per_cycle(before, after, 1);
    ASSERT_TRUE(j.is_object());
    EXPECT_GT(j["client_cpu_us_per_cycle"].get<double>(), 0.0);
    EXPECT_GE(j["client_runs_per_cycle"].get<double>(), 0.0);
}

}  // namespace
}  // namespace zklock::cli
