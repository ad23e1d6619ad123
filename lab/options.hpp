// The options of `bench` that several scenarios take, each group registered
// by one function here: on a scenario's subcommand (command.cpp, as its
// scenario_takes says) and once on `bench` itself for the flag form.
#pragma once

#include "command.hpp"
#include "scenarios/scenario.hpp"

#include <CLI/CLI.hpp>

#include <vector>

namespace zklock::cli {

/// -c/--connect, --connect-timeout, --auth-file, --acl, --path, --warmup,
/// --server-config: the ZooKeeper server (or the throwaway one) and the lock paths.
void add_zookeeper_options(CLI::App& cmd, bench_cli& c);
/// --json.
void add_json_option(CLI::App& cmd, bench_cli& c);
/// --ops, described as `text`, its default shown when `show_default`.
void add_ops_option(CLI::App& cmd, bench_cli& c, const char* text, bool show_default = true);
/// The general description of --ops.
inline constexpr const char* ops_text =
    "acquisitions to measure (election: handoffs; locks: one lock's cycles beside the burst)";
/// --clients, described as `text`, its default shown when `show_default`.
void add_clients_option(CLI::App& cmd, bench_cli& c, const char* text, bool show_default = true);
/// The general description of --clients.
inline constexpr const char* clients_text =
    "sessions contending on one lock (contended; election participants; semaphore and rwlock clients)";
/// The heading in a scenario's help of the options that vary zklock's
/// protocol or the floor's, for those who measure one change against another.
inline constexpr const char* developer_group = "Developer knobs";
/// A group of options registered by one function, and the scenario_takes
/// flag that gives it to a scenario's subcommand.
struct option_group {
    bool scenario_takes::*taken;
    void (*add)(CLI::App& cmd, bench_cli& c);
};
/// The groups of the ZooKeeper mutex runs, in the order they are registered:
/// --naive, --no-release-mark and --lock-delay (the MutexOptions of zklock's
/// mutexes); --confirm-unlock; --one-thread; --no-floor; --floor-release-proof;
/// --floor-requeue; --requeue; --rounds; --curator and --curator-warmup;
/// --kazoo; --curator-script and --kazoo-script; --ensemble and --busy.
const std::vector<option_group>& mutex_run_groups();
/// --backend, described as `text`; returned for the options that need it.
CLI::Option* add_backend_option(CLI::App& cmd, bench_cli& c, const char* text);
/// The general descriptions of --backend, --ttl and --report.
inline constexpr const char* backend_text =
    "compare backends: zookeeper, redis, redlock, postgres-lease, postgres-advisory, postgres-row, postgres-version, "
    "mysql-lease, mysql-advisory, mysql-row, mysql-version, flock, memcached, etcd or all (repeatable, or comma-separated); "
    "runs uncontended, contended and separate (--scenario); with --safety also "
    "the anti-examples naive-setnx-expire and naive-setnx-getset (all includes them)";
inline constexpr const char* ttl_text =
    "with --backend: lease time-to-live of redis, redlock, postgres-lease, postgres-version, mysql-lease, mysql-version, "
    "memcached, etcd; with --safety (default 1s) also "
    "the ZooKeeper session timeout and the naive recipes' TTL";
/// Their descriptions on a scenario's subcommand.
inline constexpr const char* scenario_backend_text =
    "run the scenario on these backends instead: zookeeper, redis, redlock, postgres-lease, postgres-advisory, "
    "postgres-row, postgres-version, mysql-lease, mysql-advisory, mysql-row, mysql-version, flock, memcached, etcd or all "
    "(repeatable, or comma-separated)";
inline constexpr const char* scenario_ttl_text =
    "with --backend: lease time-to-live of redis, redlock, postgres-lease, postgres-version, mysql-lease, "
    "mysql-version, memcached, etcd";
inline constexpr const char* scenario_report_text =
    "write results.json, results.md and SVG charts (gnuplot) of the runs into this directory (without --backend: "
    "of the zookeeper backend); with --ensemble N: the peers report, peers-ensemble-N.md and .json";
inline constexpr const char* report_text =
    "write results.json, results.md and SVG charts (gnuplot) of the scenarios run into this directory (without "
    "--backend: of the zookeeper backend); with --ensemble N: the peers report, peers-ensemble-N.md and .json; "
    "with --safety: safety.json, safety.md and safety.svg";
/// --redis, --redlock, --postgres, --mysql, --memcached, --etcd, --flock-dir, --sweep, --baselines: each needs `backend`.
void add_server_options(CLI::App& cmd, bench_cli& c, CLI::Option* backend);
/// --ttl, described as `text`, its default shown when `show_default`.
void add_ttl_option(CLI::App& cmd, bench_cli& c, const char* text, bool show_default = true);
/// --report, described as `text`.
void add_report_option(CLI::App& cmd, bench_cli& c, const char* text);

} // namespace zklock::cli
