// zklock bench --scenario multi: several locks per acquisition (dining
// philosophers), zklock's MultiMutex against single locks taken one by one.
#pragma once

#include <zklock/session.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace zklock::cli {

struct multi_bench_options {
    SessionOptions session;            ///< each client's session (connect string, credentials)
    int clients = 8;                   ///< K
    int paths = 5;                     ///< M lock paths; each acquisition takes 2 or 3 of them
    int ops = 2000;                    ///< acquisition attempts in all, per method
    std::chrono::milliseconds timeout{2000};  ///< an acquisition that waits longer gives up: a timeout
    std::chrono::microseconds hold{1000};     ///< how long each holder holds
    std::string base;                  ///< parent of each method's lock paths
};

/// The method's label and how it takes (and releases) one subset.
enum class multi_method { multi_mutex, sorted_singles, unsorted_singles };

/// Runs `method` with every client on its own session and thread; returns a
/// result line as `zklock bench` prints it (backend, scenario "multi", clients,
/// ops acquired, p50/p99/mean of the waits that acquired, ops_per_s, wall_s,
/// timeouts, paths, timeout_ms).
nlohmann::json run_multi(const multi_bench_options& o, multi_method method);

} // namespace zklock::cli
