// zklock bench --safety: one run, one row under one fault.
//
//   1. K client processes (`zklock-bench bench-safety-client`) loop on one lock, each
//      with its own connection or session (through its own FaultyLinks for a
//      partition), each step recorded by the run's safety_resource.
//   2. Once `grants` critical sections have been entered, the fault is armed:
//      the first holder to reach its second write (SETNX+EXPIRE killed: its
//      EXPIRE) is held back while the bench acts (SIGSTOP or SIGKILL of that
//      process, SIGKILL or restart of the server, blackhole of its links).
//   3. The fault ends (SIGCONT, restart, heal); the run waits for `grants` more
//      grants, or calls the lock stuck after recovery_limit().
//   4. The clients stop (those still waiting for a stuck lock are killed), and
//      the ledger and the sections become the report's row.
#pragma once

#include "safety/plan.hpp"
#include "safety/servers.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <stdexcept>
#include <string>

namespace zklock::cli::safety {

/// A stop signal arrived: the bench cleans up and exits.
struct interrupted_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct run_context {
    safety_settings settings;
    safety_servers& servers;
    std::string executable;  ///< this zklock, for the client processes
    int signal_fd = -1;      ///< the stop signals (a signalfd), or -1
    std::atomic<bool>& interrupted;
};

/// Runs `row` under `fault` (an applicable pair) and returns its report row
/// (status "ran", or "skipped" when the fault needs what this machine lacks,
/// or "failed" when the lock never got going). Throws interrupted_error.
nlohmann::json run_fault(const std::string& row, const std::string& fault, run_context& ctx);

}  // namespace zklock::cli::safety
