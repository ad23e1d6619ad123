// bench safety: safety, not speed. The same faults against every backend and
// the naive Redis recipes, K client processes on one lock, each run judged by
// fenced and unfenced copies of the resource (safety/). It starts, kills and
// restarts its own servers: no ZooKeeper options.
#include "scenarios/scenario.hpp"

#include "command.hpp"

namespace zklock::cli {
namespace {

void add_safety_options(CLI::App& cmd, bench_cli& c, CLI::Option* safety_flag) {
    auto& b = c.backends;
    auto* fault = cmd.add_option("--fault", b.faults,
                                 "the faults: paused-holder, killed-holder, killed-server, "
                                 "restart-without-persistence, partitioned-client or all (repeatable, or "
                                 "comma-separated; default all)")
                      ->delimiter(',')
                      ->check(CLI::IsMember({"all", "paused-holder", "killed-holder", "killed-server",
                                             "restart-without-persistence", "partitioned-client"}));
    auto* duration = add_duration_option(cmd, "--fault-duration", b.fault_ms,
                                         "how long a pause, an outage or a partition lasts "
                                         "(default 3 x --ttl)",
                                         {std::chrono::milliseconds(1), std::chrono::milliseconds(300000)}, false);
    auto* interval = add_duration_option(cmd, "--write-interval", b.write_interval_ms,
                                         "time between two writes of a critical section",
                                         {std::chrono::milliseconds(1), std::chrono::milliseconds(60000)});
    if (safety_flag)
        for (auto* option : {fault, duration, interval}) option->needs(safety_flag);
}

} // namespace

const scenario& safety_scenario() {
    static const scenario s{
        .name = "safety",
        .description = "Safety, not speed: the same faults against every backend and the naive Redis recipes",
        .form = flag_form::safety,
        .takes = {.zookeeper = false, .clients = true, .backends = true},
        .ops_text = "grants to see before the fault, and after it (default 4)",
        .clients_text = "client processes on one lock (default 3)",
        .backend_text = "backends and naive recipes to run under the faults: zookeeper, redis, redlock, "
                        "postgres-lease, postgres-advisory, postgres-row, postgres-version, mysql-lease, "
                        "mysql-advisory, mysql-row, mysql-version, flock, memcached, etcd, naive-setnx-expire, "
                        "naive-setnx-getset or all (repeatable, or comma-separated; default all)",
        .ttl_text = "lease time-to-live of redis, redlock, postgres-lease, postgres-version, mysql-lease, mysql-version "
                    "and the naive recipes (memcached, etcd: at least 2s), and the ZooKeeper session timeout (default 1s)",
        .report_text = "write safety.json, safety.md and safety.svg into this directory",
        .general_defaults = false,
        .add_own_options = add_safety_options,
    };
    return s;
}

} // namespace zklock::cli
