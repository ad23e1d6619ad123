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
/// The acquisitions, attempts, wakeups and timer retries counted from `before` to `after`.
lock_stats stats_between(const lock_stats& before, const lock_stats& after);

/// `a / b`; NaN (null in the JSON) when b is 0.
double ratio(std::uint64_t a, std::uint64_t b);

/// The JSON line: the fields, the counters per grant, then `extra`. A figure
/// that could not be measured (NaN) is null, not a misleading number.
nlohmann::json to_json(const bench_result& r);

/// Prints a result (ours, a floor's, a peer's, a scale scenario's): with
/// `json` its JSON line now; otherwise it joins the table that the next
/// print_table() prints (runs/table.hpp), which compares it with the rows
/// beside it.
void print_result(const nlohmann::json& row, bool json);
/// Prints the rows given to print_result() without `json` since the last
/// call as one table, and forgets them; nothing when there are none.
void print_table();
/// Says that `backend` grants in FIFO order: the table explains out-of-order
/// grants on its rows (the ZooKeeper recipes' rows are known to be FIFO).
void note_fifo_backend(const std::string& backend);

} // namespace zklock::cli
