// The deterministic simulation: many schedules, each from its seed. A failing
// schedule prints its seed, the broken invariant and the schedule; replay one
// seed with ZKLOCK_SIM_SEED=<seed>. ZKLOCK_SIM_SCHEDULES sets how many run
// (the long mode: ZKLOCK_SIM_SCHEDULES=1000000 in a release build);
// ZKLOCK_SIM_VERBOSE=1 with a seed adds every request, reply and log line to
// its schedule.
#include "runner.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

zklock::sim::sim_options options() {
    zklock::sim::sim_options o;
    o.verbose = std::getenv("ZKLOCK_SIM_VERBOSE") != nullptr;
    return o;
}

std::string report(std::uint64_t seed, const zklock::sim::schedule_result& r) {
    std::string out = "seed " + std::to_string(seed) + ": " + r.failure + "\nschedule (replay: ZKLOCK_SIM_SEED=" +
                      std::to_string(seed) + "):\n";
    for (const auto& line : r.journal) out += "  " + line + "\n";
    return out;
}

TEST(Simulation, SameSeedSameSchedule) {
    // Every request, reply and event of the run, in order and in simulated time.
    zklock::sim::sim_options verbose;
    verbose.verbose = true;
    const auto a = zklock::sim::run_schedule(7, verbose);
    const auto b = zklock::sim::run_schedule(7, verbose);
    ASSERT_GT(a.journal.size(), 100u);
    EXPECT_EQ(a.journal, b.journal);
    EXPECT_EQ(a.steps, b.steps);
}

TEST(Simulation, SchedulesKeepEveryInvariant) {
    if (const char* one = std::getenv("ZKLOCK_SIM_SEED"); one && *one) {
        const auto seed = std::strtoull(one, nullptr, 10);
        const auto r = zklock::sim::run_schedule(seed, options());
        ASSERT_TRUE(r.ok) << report(seed, r);
        return;
    }
    const auto count = env_number("ZKLOCK_SIM_SCHEDULES", 5000);
    const auto first = env_number("ZKLOCK_SIM_FIRST_SEED", 1);
    std::uint64_t grants = 0, steps = 0;
    // Every schedule runs; the first failure is reported whole, the others by seed.
    std::string first_failure;
    std::vector<std::uint64_t> failed;
    for (std::uint64_t seed = first; seed < first + count; ++seed) {
        const auto r = zklock::sim::run_schedule(seed, options());
        if (!r.ok) {
            if (failed.empty()) first_failure = report(seed, r);
            failed.push_back(seed);
            if (failed.size() <= 50) std::printf("seed %llu: %s\n", static_cast<unsigned long long>(seed), r.failure.c_str());
        }
        grants += r.grants;
        steps += r.steps;
    }
    std::string seeds;
    for (std::size_t i = 0; i < failed.size() && i < 50; ++i) seeds += " " + std::to_string(failed[i]);
    EXPECT_TRUE(failed.empty()) << failed.size() << " schedules failed (seeds" << seeds << ")\n" << first_failure;
    RecordProperty("schedules", std::to_string(count));
    std::printf("%llu schedules, %llu steps, %llu grants\n", static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(steps), static_cast<unsigned long long>(grants));
}

} // namespace
