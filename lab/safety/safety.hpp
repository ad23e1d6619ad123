// zklock bench --safety: the same faults against every lock backend (and the
// naive Redis recipes, as anti-examples), each run judged by a SafetyLedger,
// and the report (docs/bench/safety.md, safety.json, safety.svg).
//
//   safety/plan      rows, faults, which applies where, option checks
//   safety/servers   the throwaway servers and the fault's target
//   safety/run       one run: client processes, the fault, the tally
//   safety/resource  the guarded resource the clients write to
//   safety/protocol  what clients and resource say to each other
//   safety/client    the client process (hidden `zklock-bench bench-safety-client`)
//   safety/naive     the naive recipes (SETNX+EXPIRE, SETNX+GETSET)
//   safety/tally     a run's sections and ledger into a report row
//   report/safety    safety.json, safety.md, the chart
#pragma once

#include "safety/plan.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace zklock::cli {

struct safety_bench_options {
    std::vector<std::string> rows;    ///< backends and naive recipes, expanded, in report order
    std::vector<std::string> faults;  ///< expanded, in report order
    safety::safety_settings settings;
    bool json = false;                ///< one JSON object per row on stdout
    std::string report_dir;           ///< empty: no report
    std::string command_line;         ///< how it was run, for the report (secrets redacted)
};

/// Runs every applicable (row, fault) pair. 0 when every run ran (whatever it
/// measured), 1 when a run failed to get going or the report could not be
/// written, 130 when a stop signal ended it (after cleaning up).
int bench_safety(const safety_bench_options& o);

/// Writes safety.json, safety.md, the chart's data (safety-*.dat), its gnuplot
/// script (safety.gp) and safety.svg into `dir`, created if missing; the speed
/// report's files are left alone. False, after saying why on stderr, when
/// gnuplot is missing or fails (the JSON and Markdown are written).
bool write_safety_report(const std::string& dir, const nlohmann::json& report);

/// The report's Markdown. Pure.
std::string safety_markdown(const nlohmann::json& report);
/// The chart's data for one figure of the rows (`key`: a panel's, e.g.
/// "overlaps"): a row per backend, a column per fault that ran somewhere, "?"
/// where it did not run for that backend. Pure.
std::string safety_chart_data(const nlohmann::json& report, const std::string& key);
/// One panel of safety.svg: a figure of the rows, its data file, its title.
struct chart_panel {
    std::string key, file, title;
};
/// The panels: overlaps, stale writes, stale writes a fence let through.
const std::vector<chart_panel>& safety_chart_panels();
/// The gnuplot script that draws safety.svg from the panels' data files (a
/// column per fault that ran; each y axis reaches past its largest figure). Pure.
std::string safety_chart_script(const nlohmann::json& report);

/// Registers the hidden `bench-safety-client` subcommand (the client processes).
void add_safety_client(CLI::App& app, int& exit_code);

}  // namespace zklock::cli
