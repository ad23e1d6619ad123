// Runs a short program (iptables) to completion and collects what it printed.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace zklock::testing::detail {

struct CommandResult {
    int status = -1;     ///< waitpid(2) status
    std::string output;  ///< stdout and stderr, interleaved
    [[nodiscard]] bool ok() const noexcept;
};

/// Runs argv (argv[0] a path, or looked up in PATH) as a ChildProcess with
/// LC_ALL=C, its output in a private temp file, and waits up to timeout (then
/// kills it: status is SIGKILL's). No shell. Throws std::system_error when it
/// cannot be started.
CommandResult run_command(std::vector<std::string> argv, std::chrono::milliseconds timeout);

}  // namespace zklock::testing::detail
