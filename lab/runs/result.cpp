#include "runs/result.hpp"

#include "bench.hpp"
#include "runs/table.hpp"

#include <cmath>
#include <iostream>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <vector>

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

lock_stats stats_between(const lock_stats& before, const lock_stats& after) {
    lock_stats d;
    d.acquisitions = after.acquisitions - before.acquisitions;
    d.attempts = after.attempts - before.attempts;
    d.wakeups = after.wakeups - before.wakeups;
    d.timer_retries = after.timer_retries - before.timer_retries;
    return d;
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

// The rows printed without --json since the last print_table(), and the
// backends that grant in FIFO order (the ZooKeeper recipes, and those
// note_fifo_backend() names).
struct pending_table {
    std::mutex mutex;
    std::vector<nlohmann::json> rows;
    std::set<std::string> fifo = {"zookeeper", "c-client floor", "curator", "kazoo"};
};

pending_table& pending() {
    static pending_table table;
    return table;
}

} // namespace

void print_result(const nlohmann::json& row, bool json) {
    if (json) {
        std::cout << row.dump() << std::endl;
        return;
    }
    auto& table = pending();
    const std::lock_guard lock(table.mutex);
    table.rows.push_back(row);
}

void note_fifo_backend(const std::string& backend) {
    auto& table = pending();
    const std::lock_guard lock(table.mutex);
    table.fifo.insert(backend);
}

void print_table() {
    auto& table = pending();
    const std::lock_guard lock(table.mutex);
    if (table.rows.empty()) return;
    std::cout << format_table(table.rows, table.fifo) << std::flush;
    table.rows.clear();
}

} // namespace zklock::cli
