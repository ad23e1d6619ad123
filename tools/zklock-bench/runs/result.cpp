#include "runs/result.hpp"

#include "bench.hpp"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

namespace zklock::cli {

double micros(bench_clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

bench_result timed_result(std::string scenario, int clients, const std::vector<double>& samples_us, double wall_s) {
    bench_result r;
    r.scenario = std::move(scenario);
    r.clients = clients;
    r.ops = samples_us.size();
    r.wall_s = wall_s;
    r.ops_per_s = static_cast<double>(samples_us.size()) / wall_s;
    r.p50_us = percentile(samples_us, 0.50);
    r.p99_us = percentile(samples_us, 0.99);
    r.mean_us = samples_us.empty() ? std::numeric_limits<double>::quiet_NaN()
                                   : std::accumulate(samples_us.begin(), samples_us.end(), 0.0) /
                                         static_cast<double>(samples_us.size());
    return r;
}

void add_stats(lock_stats& total, const lock_stats& more) {
    total.acquisitions += more.acquisitions;
    total.attempts += more.attempts;
    total.wakeups += more.wakeups;
    total.timer_retries += more.timer_retries;
    total.total_wait += more.total_wait;
    total.total_hold += more.total_hold;
}

double ratio(std::uint64_t a, std::uint64_t b) {
    return b ? static_cast<double>(a) / static_cast<double>(b) : std::numeric_limits<double>::quiet_NaN();
}

nlohmann::json to_json(const bench_result& r) {
    nlohmann::json j = {{"backend", r.backend}, {"scenario", r.scenario}, {"clients", r.clients},
                        {"ops", r.ops},         {"p50_us", r.p50_us},     {"p99_us", r.p99_us},
                        {"mean_us", r.mean_us}, {"ops_per_s", r.ops_per_s}, {"wall_s", r.wall_s}};
    if (r.counters) {
        const auto& c = *r.counters;
        j["attempts_per_grant"] = ratio(c.attempts, c.acquisitions);
        j["wakeups_per_grant"] = r.wakeups_visible ? ratio(c.wakeups, c.acquisitions)
                                                   : std::numeric_limits<double>::quiet_NaN();
        j["timer_retries_per_grant"] = ratio(c.timer_retries, c.acquisitions);
    }
    for (const auto& item : r.extra.items()) j[item.key()] = item.value();
    for (auto& item : j.items())
        if (item.value().is_number_float() && std::isnan(item.value().get<double>())) item.value() = nullptr;
    return j;
}

namespace {

// A field's value as printed: "-" when null, a duration in whole microseconds,
// a ratio with two decimals.
std::string shown(const std::string& key, const nlohmann::json& v) {
    if (v.is_null()) return "-";
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_string()) return v.get<std::string>();
    if (!v.is_number()) return v.dump();
    if (v.is_number_integer()) return v.dump();
    const double d = v.get<double>();
    std::ostringstream out;
    const bool micros = key.ends_with("_us");
    out << std::fixed << std::setprecision(micros || std::abs(d) >= 100 ? 0 : 2) << d << (micros ? " us" : "");
    return out.str();
}

} // namespace

void print_result(const nlohmann::json& row, bool json) {
    if (json) {
        std::cout << row.dump() << std::endl;
        return;
    }
    std::string label = row.value("backend", std::string());
    if (row.value("naive", false)) label += " (naive: watch all children)";
    if (row.value("confirm_unlock", false)) label += " (unlock waits for the delete)";
    const std::string recipe = row.value("recipe", std::string("mutex"));
    const char* rate_unit = recipe == "election" ? "handoffs/s" : recipe == "rwlock" ? "ops/s" : "acq/s";
    std::ostringstream line;
    line << std::left;
    if (!label.empty()) line << std::setw(18) << label << (label.size() >= 18 ? " " : "");
    line << std::setw(12) << row.value("scenario", std::string());
    // Which server served the run (runs/mutex.cpp), before its figures.
    bool served = false;
    for (const char* key : {"server", "ensemble", "busy"})
        if (row.contains(key)) {
            line << "  " << key << " " << shown(key, row[key]);
            served = true;
        }
    if (served) line << " ";
    if (row.contains("clients")) line << " clients " << std::setw(3) << shown("clients", row["clients"]);
    if (row.contains("ops")) line << " ops " << std::setw(6) << shown("ops", row["ops"]);
    if (row.contains("p50_us")) line << " p50 " << std::setw(7) << format_field(row, "p50_us") << " us";
    if (row.contains("p99_us")) line << "  p99 " << std::setw(7) << format_field(row, "p99_us") << " us";
    if (row.contains("ops_per_s")) line << "  " << std::setw(8) << format_field(row, "ops_per_s") << " " << rate_unit;
    // Everything else, by name (the JSON has the same names).
    static const std::set<std::string> said = {"backend", "scenario", "clients",  "ops",     "p50_us",
                                               "p99_us",  "ops_per_s", "mean_us", "wall_s",  "measures",
                                               "recipe",  "naive",     "confirm_unlock", "server",  "ensemble",
                                               "busy"};
    for (const auto& [key, value] : row.items())
        if (!said.contains(key)) line << "  " << key << " " << shown(key, value);
    if (row.contains("measures")) line << "  (" << shown("measures", row["measures"]) << ")";
    std::cout << line.str() << std::endl;
}

} // namespace zklock::cli
