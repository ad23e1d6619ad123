// zklock bench over ZooKeeper's recipes: the options of a run,
// and what bench.cpp (the mutex scenarios, the command) and runs/recipes.cpp
// (election, semaphore, read-write lock) share.
#pragma once

#include "ensemble/server_work.hpp"
#include "runs/result.hpp"
#include "common.hpp"

#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace zklock::cli::zkbench {

using clock_type = bench_clock;

struct bench_options {
    std::string connect;
    bool connect_given = false;
    std::string recipe = "mutex";
    std::string scenario = "uncontended";
    bool scenario_given = false;  ///< --scenario, or the scenario's subcommand
    int clients = 8;
    int permits = 3;
    double read_ratio = 0.8;
    int ops = 2000;
    bool naive = false;
    bool confirm_unlock = false;
    bool one_thread = false;  ///< contended: every client on one thread (runs/run.hpp)
    bool json = false;
    bool curator = false;
    bool kazoo = false;
    bool floor = true;  ///< the C client's floor loop beside the uncontended mutex run
    bool floor_release_proof = false;  ///< contended: the floor releases as a Mutex does (--floor-release-proof)
    bool floor_requeue = false;  ///< the floors release and queue again in one transaction (--floor-requeue)
    bool requeue = false;  ///< the requeue rows beside the plain ones: zklock's requeue() turns and the requeue floor
    int rounds = 1;        ///< --rounds N: the clients of each scenario alternated N times, then the medians
    int curator_warmup = 20000;  ///< Curator's unmeasured cycles in its own JVM before its measured ones
    std::string curator_script;
    std::string kazoo_script;
    std::string duration_text = "10s";  ///< --scenario mixed
    std::string hold_text = "0";        ///< --scenario mixed
    int waiters = 1000;                 ///< --scenario waiters
    int sessions = 20;                  ///< --scenario waiters
    int locks = 10000;                  ///< --scenario locks
    bool on_session = false;            ///< --scenario locks: taken in a handler on the Session's executor
    std::string path = "/zklock-bench";
    std::vector<std::string> server_config;
    int warmup = 20000;
    credentials creds;  ///< --auth-file, --acl (ZooKeeper part used here)
    std::chrono::milliseconds connect_timeout = default_connect_timeout;  ///< --connect-timeout
    bool connect_timeout_given = false;
    bool mark_release = true;  ///< MutexOptions::mark_release (--no-release-mark: off)
    int lock_delay_ms = 0;     ///< MutexOptions::lock_delay (--lock-delay)
    int lock_paths = 5;             ///< scenario multi: M
    int acquire_timeout_ms = 2000;  ///< scenario multi: an acquisition waiting longer gives up
    int ensemble = 0;               ///< --ensemble N: the bench's own servers (0: not given, a standalone server)
    int busy = 0;                   ///< --busy K: CPU-bound processes beside the mutex scenarios
    std::string report_dir;         ///< --report with --ensemble: the peers report's directory
    std::string command_line;       ///< how it was run, for the report (secrets redacted)
};

/// The Session options of every client of a run.
SessionOptions session_options(const bench_options& o);
/// A lock path of its own for one run of `scenario`.
std::string unique_path(const bench_options& o, const std::string& scenario);
/// The MutexOptions of zklock's mutexes (--naive, --no-release-mark).
MutexOptions mutex_options(const bench_options& o);

/// zklock's run of the uncontended and the contended scenario on o.connect;
/// with `window`, what the server committed for the measured part (the
/// readings' fields in the result, ensemble/server_work.hpp).
bench_result run_mutex_uncontended(const bench_options& o, measured_window* window = nullptr);
bench_result run_mutex_contended(const bench_options& o, measured_window* window = nullptr);
/// zklock's requeue row of `scenario` (uncontended: one worker; contended:
/// o.clients workers) on o.connect (runs/requeue.hpp), `window` as above.
bench_result run_mutex_requeue(const bench_options& o, const std::string& scenario, measured_window* window = nullptr);
/// The C client's floor of zklock's scenario in `r` (runs/floor.cpp), run
/// now on o.connect, with what the server committed for its measured part;
/// zklock's ratios to it go into r.extra. `requeue_row`: the requeue floor
/// beside zklock's requeue row (the floor's row says "requeue"). Returns the
/// floor's line.
nlohmann::json run_floor_beside(const bench_options& o, bench_result& r, bool requeue_row = false);
/// A peer's run of `scenario` on o.connect (Curator's harness,
/// bench/curator/run.sh; kazoo's client, bench/kazoo/kazoo_bench.py), run as
/// a child without a shell, `extra` after its arguments: its result line, or
/// nullopt after saying why.
std::optional<nlohmann::json> run_peer(const bench_options& o, const std::string& peer, const std::string& scenario,
                                       const std::vector<std::string>& extra = {});

/// Why a peer that `o` asks for (--curator, --kazoo) cannot run here, told
/// before anything starts (a harness that is not there, python3-kazoo
/// missing), or nullopt. A peer that fails when it runs (Curator's jars
/// missing) is found then.
std::optional<std::string> peer_unavailable(const bench_options& o);
/// The exit status of a run whose peers in `failed`, asked for, did not run:
/// 0 when none, else exit_unavailable after saying so.
int missing_peers(const std::set<std::string>& failed);

/// --scenario uncontended, contended or all (runs/mutex.cpp): once per
/// serving server (ensemble/servers.hpp), each row tagged with the server's
/// role, the ensemble and --busy; then the peers report when asked for.
int bench_mutex_scenarios(const bench_options& o);

/// --recipe election: handoffs from a resigning leader to the next.
bench_result run_election(const bench_options& o);
/// --recipe semaphore: K clients on --permits leases.
bench_result run_semaphore(const bench_options& o);
/// --recipe rwlock: readers and writers at --read-ratio.
bench_result run_rwlock(const bench_options& o);

} // namespace zklock::cli::zkbench
