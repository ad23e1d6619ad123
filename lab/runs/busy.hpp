// --busy K: K CPU-bound processes sharing the cores with the bench's clients
// and servers for the whole measured run, as other work shares a host.
#pragma once

#include <zklock/testing/process.hpp>

#include <vector>

namespace zklock::cli {

/// Starts `k` processes that spin (/bin/sh looping on its builtin `:`; their
/// command line names this bench's pid: `zklock-bench-busy PID`), each a
/// testing::ChildProcess: in its own process group, killed on destruction (so
/// also when the run throws), and by the kernel when this process dies
/// (PR_SET_PDEATHSIG: a SIGINT or SIGTERM that ends the bench ends them).
/// Create it on the thread that runs the bench (the death signal follows the
/// creating thread). Throws std::system_error when one cannot start.
class busy_load {
public:
    explicit busy_load(int k);
    busy_load(const busy_load&) = delete;
    busy_load& operator=(const busy_load&) = delete;

    /// How many spin.
    [[nodiscard]] int size() const noexcept { return static_cast<int>(spinners_.size()); }

private:
    std::vector<testing::ChildProcess> spinners_;
};

} // namespace zklock::cli
