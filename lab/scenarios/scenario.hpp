// A scenario of `bench`: a subcommand of its own (`zklock bench waiters
// --waiters 60`), and in the flag form the value of --scenario (or --recipe,
// or --safety) that stands for it (`zklock bench --scenario waiters --waiters 60`).
// One file each in scenarios/ says what it is, which of the shared option
// groups (options.hpp) it takes and which options are its own.
#pragma once

#include <CLI/CLI.hpp>

#include <vector>

namespace zklock::cli {

struct bench_cli;

/// The shared option groups a scenario's subcommand takes (options.hpp).
struct scenario_takes {
    bool zookeeper = true;        ///< -c, --connect-timeout, --auth-file, --acl, --path, --warmup, --server-config
    bool ops = true;              ///< --ops
    bool clients = false;         ///< --clients
    bool mutex = false;           ///< --naive, --no-release-mark, --lock-delay (MutexOptions)
    bool confirm_unlock = false;  ///< --confirm-unlock
    bool one_thread = false;      ///< --one-thread
    bool floor = false;           ///< --no-floor
    bool floor_release_proof = false;  ///< --floor-release-proof (the contended floor)
    bool floor_requeue = false;   ///< --floor-requeue (the mutex scenarios' floors)
    bool requeue = false;         ///< --requeue
    bool rounds = false;          ///< --rounds
    bool curator = false;         ///< --curator, --curator-warmup
    bool kazoo = false;           ///< --kazoo
    bool scripts = false;         ///< --curator-script, --kazoo-script
    bool ensemble = false;        ///< --ensemble, --busy
    bool backends = false;        ///< --backend, --ttl, --report
    bool servers = false;         ///< --redis, --redlock, --postgres, --flock-dir, --sweep, --baselines
};

/// What choosing a scenario's subcommand stands for in the flag form.
enum class flag_form {
    scenario,  ///< --scenario NAME
    recipe,    ///< --recipe NAME
    safety,    ///< --safety
};

struct scenario {
    const char* name;
    const char* description;  ///< its line in `bench --help`
    flag_form form = flag_form::scenario;
    scenario_takes takes;
    // The shared options' descriptions here; none: the general ones (options.hpp).
    const char* ops_text = nullptr;
    const char* clients_text = nullptr;
    const char* backend_text = nullptr;
    const char* ttl_text = nullptr;
    const char* report_text = nullptr;
    /// False when the defaults of --ops, --clients and --ttl are not the
    /// general ones (then its texts say them).
    bool general_defaults = true;
    /// Adds the options only this scenario takes to `cmd` (its subcommand, or
    /// `bench` in the flag form, where they need `flag` when given: --safety's
    /// need --safety); none: it has none.
    void (*add_own_options)(CLI::App& cmd, bench_cli& c, CLI::Option* flag) = nullptr;
};

const scenario& uncontended_scenario();
const scenario& contended_scenario();
const scenario& all_scenario();
const scenario& separate_scenario();
const scenario& mixed_scenario();
const scenario& waiters_scenario();
const scenario& locks_scenario();
const scenario& multi_scenario();
const scenario& election_scenario();
const scenario& semaphore_scenario();
const scenario& rwlock_scenario();
const scenario& safety_scenario();

/// Every scenario, in the order `bench --help` lists them.
const std::vector<const scenario*>& every_scenario();

} // namespace zklock::cli
