// One result of zklock bench, whatever the backend, recipe or scenario: its
// figures, its JSON line and its printed line (one printer for every row).
#pragma once

#include <zklock/lock.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace zklock::cli {

using bench_clock = std::chrono::steady_clock;

/// Microseconds in `d`.
double micros(bench_clock::duration d);

struct bench_result {
    std::string backend = "zookeeper";
    std::string scenario;
    int clients = 1;
    std::size_t ops = 0;  ///< measured samples
    double p50_us = 0, p99_us = 0, mean_us = 0, ops_per_s = 0, wall_s = 0;
    /// The clients' lock_stats summed (wakeups_per_grant, attempts_per_grant,
    /// timer_retries_per_grant in the JSON); none: not counted (a floor, a peer).
    std::optional<lock_stats> counters;
    /// False where the server hands the lock over itself (PostgreSQL advisory and
    /// row locks): the client sees no wake-up, and wakeups_per_grant is null.
    bool wakeups_visible = true;
    nlohmann::json extra = nlohmann::json::object();  ///< scenario-, backend- and recipe-specific figures
};

/// A run of `clients` clients whose samples (us) took `wall_s` seconds in all.
bench_result timed_result(std::string scenario, int clients, const std::vector<double>& samples_us, double wall_s);

/// `total` plus `more` (every counter and duration).
void add_stats(lock_stats& total, const lock_stats& more);

/// `a / b`; NaN (null in the JSON) when b is 0.
double ratio(std::uint64_t a, std::uint64_t b);

/// The JSON line: the fields, the counters per grant, then `extra`. A figure
/// that could not be measured (NaN) is null, not a misleading number.
nlohmann::json to_json(const bench_result& r);

/// Prints a result line (ours, a floor's, a peer's, a scale scenario's): the
/// JSON itself with `json`, otherwise one line of text.
void print_result(const nlohmann::json& row, bool json);

} // namespace zklock::cli
