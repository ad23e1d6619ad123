// One schedule of the simulation: contenders of 1 to 3 locks (Mutex,
// Semaphore, SharedMutex), each contender in its own
// simulated process with its own clock, against the simulated ZooKeeper, with
// faults; the invariants are checked after every step of the world.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zklock::sim {

struct schedule_result {
    bool ok = true;
    std::string failure;               ///< the broken invariant, when !ok
    std::vector<std::string> journal;  ///< the schedule as it ran
    std::uint64_t steps = 0;
    std::uint64_t grants = 0;
};

struct sim_options {
    bool verbose = false;  ///< every request and reply in the journal
};

/// Runs the schedule of `seed`; the same seed runs the same schedule.
schedule_result run_schedule(std::uint64_t seed, const sim_options& options = {});

} // namespace zklock::sim
