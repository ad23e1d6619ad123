// zklock-bench's commands: `bench` (command.cpp registers it; bench.cpp runs
// what it asks for) and `chaos` (chaos.cpp).
//
// `bench` takes a scenario two ways, both parsed into one bench_cli:
//   zklock-bench bench SCENARIO [OPTIONS]     a subcommand per scenario
//                                             (scenarios/), with its options
//   zklock-bench bench --scenario SCENARIO [OPTIONS]   (and --recipe R,
//                                             --safety) the flag form: every
//                                             scenario's options at once, as
//                                             `zklock bench` always took them
#pragma once

#include "common.hpp"
#include "runs/zookeeper.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace zklock::cli {

/// The options of `bench --backend` and `bench --safety`, beside the ZooKeeper ones.
struct backend_cli {
    std::vector<std::string> backends;
    std::string redis, redlock, postgres, mysql, flock_dir, memcached, etcd;
    std::vector<int> sweep;
    std::string report;
    bool report_alone = false;  ///< --report without --backend: the zookeeper backend
    bool baselines = false;
    int ttl_ms = 10000;
    // --safety
    bool safety = false;
    std::vector<std::string> faults;
    int fault_ms = 0;        ///< 0: 3 x ttl
    int write_interval_ms = 50;
};

/// Every option of `bench`, whichever form gave it.
struct bench_cli {
    zkbench::bench_options zookeeper;
    backend_cli backends;
    auth_options auth;
};

/// True when `cmd` has `option` and it was given (a scenario's subcommand
/// lacks the options of the others).
bool given(const CLI::App& cmd, const std::string& option);

/// Runs what `c` asks for, `cmd` being the command that parsed it (`bench` for
/// the flag form, else the scenario's subcommand): the checks across options
/// (exit_usage before anything starts), then the scenario. Returns the exit
/// status. (bench.cpp)
int run_bench(bench_cli& c, const CLI::App& cmd);

/// A bench harness (bench/curator/run.sh, bench/kazoo/kazoo_bench.py): in the
/// installed share/ directory when this binary is the installed one, else in
/// the source tree. (bench.cpp)
std::string default_bench_script(const std::string& relative);

/// Registers `bench`, its scenarios' subcommands and the hidden client
/// processes of `bench --safety` on `app`.
void add_bench(CLI::App& app, int& exit_code);
/// Registers `chaos` on `app`.
void add_chaos(CLI::App& app, int& exit_code);

} // namespace zklock::cli
