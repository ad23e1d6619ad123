// zklock bench's comparisons within a run (pure: unit-tested in
// tests/unit/test_bench_table.cpp): which rows measured the same thing, each
// row's rate over the floor's and zklock's over each peer's, and the median
// row of each client kind over the rounds of --rounds N.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace zklock::cli {

/// Both rows measure the same thing: the scenario, the recipe, the clients,
/// the server (role, ensemble, --busy) and the round.
bool same_run(const nlohmann::json& a, const nlohmann::json& b);

/// The field of a row's rate over `backend`'s: "ops_per_s_vs_floor" for the
/// C client's floor, "ops_per_s_vs_curator", "ops_per_s_vs_kazoo".
std::string rate_ratio_key(const std::string& backend);

/// Gives each row its rate ratios to the rows of the same run in `rows`:
/// every row but a floor's its ops/s over the floor's ("requeue" rows over the
/// requeue floor's, the others over the plain floor's); zklock's rows (backend
/// "zookeeper", plain and requeue, not --naive) also over Curator's and
/// kazoo's. A ratio whose other row is missing is left out; the median rows
/// ("round": "median") keep theirs.
void add_rate_ratios(std::vector<nlohmann::json>& rows);

/// The median row of each client kind (backend, requeue) of the same run but
/// for the round, over `rows` (the rounds of one run): each number the median
/// of the rounds' (nested objects alike; the median of an even count the mean
/// of the middle two), other fields the first round's; "round": "median",
/// "rounds": how many. In order of first appearance.
std::vector<nlohmann::json> median_rows(const std::vector<nlohmann::json>& rows);

} // namespace zklock::cli
