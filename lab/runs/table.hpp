// The bench's plain output: its rows (the JSON lines that --json prints) as a
// compact table, one row per client or backend, with zklock's rate over the
// floor's and each peer's; the rows without a latency (waiters, locks) as
// wrapped "name value" lines. A pure function of the rows, so tests drive it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace zklock::cli {

/// The widest line format_table() writes.
inline constexpr std::size_t bench_table_width = 120;

/// The backends whose rows the ratio columns compare zklock's with, in the
/// order of the columns: the C client's floor, then the peers.
inline const std::vector<std::string>& compared_backends() {
    static const std::vector<std::string> names = {"c-client floor", "curator", "kazoo"};
    return names;
}

/// `rows` as text, lines of at most bench_table_width columns:
/// - the rows with a p50_us, one table: scenario, backend (the server where
///   it tells rows apart; --busy where it is not 0), clients, ops/s, p50 and
///   p99 (the handoff's p50 and the out-of-order grants where a row has them); then on
///   each zookeeper row its ops/s over that of each compared backend's row of
///   the same scenario, clients and server ("vs floor", "vs curator", ...),
///   a column for each that ran (every row's over the floor's, a requeue
///   row's over the requeue floor's; zklock's over the peers'); footnotes say
///   what the ratios are; with --rounds a line before each round's rows
///   ("round 2:") and before the medians ("median of 3 rounds:");
/// - a footnote where a row of a backend in `fifo` has out-of-order grants
///   (they count request times taken on the clients, compared across
///   sessions: not the server's order);
/// - every other row, its scalar fields as "name value" wrapped lines.
/// Objects and arrays (server_work, client_schedule, ...) are left to --json.
/// Empty for no rows.
std::string format_table(const std::vector<nlohmann::json>& rows, const std::set<std::string>& fifo);

} // namespace zklock::cli
