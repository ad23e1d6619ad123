// zklock bench over ZooKeeper: the choice of the run (the mutex scenarios in
// runs/mutex.cpp; multi; waiters, locks and mixed; the other recipes on the
// same engine, --recipe election | semaphore | rwlock) and the options every
// run's clients share. Then what runs a bench, whichever form asked for it
// (command.hpp): the checks across options, and the choice of the bench
// (--backend, --safety, or ZooKeeper's).
#include "arguments.hpp"
#include "bench.hpp"
#include "command.hpp"
#include "common.hpp"
#include "ensemble/plan.hpp"
#include "runs/multi.hpp"
#include "runs/zookeeper.hpp"
#include "safety/safety.hpp"

#include <zklock/backends.hpp>
#include <zklock/secrets.hpp>

#include <zklock/leader_election.hpp>
#include <zklock/mutex.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <future>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace zklock::cli {
namespace zkbench {

SessionOptions session_options(const bench_options& o) {
    SessionOptions s;
    s.connect = o.connect;
    s.session_timeout = std::chrono::seconds(10);
    // Throwaway servers on a loaded machine keep the library's longer default.
    if (o.connect_given || o.connect_timeout_given) s.connect_timeout = o.connect_timeout;
    apply(o.creds, s);
    return s;
}

MutexOptions mutex_options(const bench_options& o) {
    MutexOptions m;
    m.watch_all_children = o.naive;
    m.mark_release = o.mark_release;
    m.lock_delay = std::chrono::milliseconds(o.lock_delay_ms);
    return m;
}

std::string unique_path(const bench_options& o, const std::string& scenario) {
    return o.path + "/" + scenario + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(clock_type::now().time_since_epoch().count());
}

// --scenario multi: MultiMutex, single locks sorted and in the caller's order,
// and with --curator InterProcessMultiLock sorted and unsorted.
int bench_multi_scenario(const bench_options& o) {
    multi_bench_options m;
    m.session = session_options(o);
    m.clients = o.clients;
    m.paths = o.lock_paths;
    m.ops = o.ops;
    m.timeout = std::chrono::milliseconds(o.acquire_timeout_ms);
    for (const auto method : {multi_method::multi_mutex, multi_method::sorted_singles, multi_method::unsorted_singles}) {
        m.base = unique_path(o, "multi");
        print_result(run_multi(m, method), o.json);
    }
    if (o.kazoo) std::cerr << "zklock bench: kazoo has no lock over several paths; --kazoo ignored\n";
    std::set<std::string> failed;
    if (o.curator)
        for (const char* order : {"sorted", "unsorted"}) {
            auto c = run_peer(o, "curator", "multi", {"--lock-paths", std::to_string(o.lock_paths), "--order", order,
                                                      "--timeout-ms", std::to_string(o.acquire_timeout_ms)});
            if (!c) {
                failed.insert("curator");
                break;
            }
            print_result(*c, o.json);
        }
    print_table();
    return missing_peers(failed);
}

int bench(bench_options o) {
    if (o.recipe == "mutex" && (o.scenario == "uncontended" || o.scenario == "contended" || o.scenario == "all"))
        return bench_mutex_scenarios(o);
    if (o.recipe == "mutex" && o.scenario == "multi" && o.curator) {
        auto curator = o;
        curator.kazoo = false;  // ignored by multi
        if (const auto why = peer_unavailable(curator)) {
            std::cerr << "zklock bench: " << *why << "\n";
            return exit_unavailable;
        }
    }
    std::unique_ptr<testing::ZooKeeperServer> server;
    if (!o.connect_given) {
        testing::ZooKeeperServerOptions so;
        so.tick_time_ms = 200;
        so.max_session_timeout_ms = 20000;
        so.extra_config = o.server_config;
        server = std::make_unique<testing::ZooKeeperServer>(so);
        o.connect = server->connect_string();
        std::cerr << "zklock bench: started a throwaway ZooKeeper at " << o.connect << " (pass -c to use yours)";
        for (const auto& line : o.server_config) std::cerr << " " << line;
        std::cerr << "\n";
    }
    if (o.warmup > 0) {
        // A fresh server runs interpreted Java for its first thousands of requests:
        // warm it up so whichever client is measured first is not penalised.
        auto w = o;
        w.ops = o.warmup;
        w.naive = false;
        run_mutex_uncontended(w);
        std::cerr << "zklock bench: warmed up the server with " << o.warmup << " acquire/release cycles\n";
    }
    if (o.scenario == "waiters" || o.scenario == "locks") {
        scale_bench_options s;
        s.session = session_options(o);
        s.mutex = mutex_options(o);
        s.path = unique_path(o, o.scenario);
        s.waiters = o.waiters;
        s.sessions = o.sessions;
        s.locks = o.locks;
        s.on_session = o.on_session;
        s.json = o.json;
        s.floor = o.floor;
        s.cycles = o.ops;
        s.floor_path = unique_path(o, o.scenario + "-floor");
        return o.scenario == "waiters" ? bench_waiters(s) : bench_locks(s);
    }
    if (o.scenario == "mixed") {
        mixed_bench_options m;
        m.connect = o.connect;
        m.session = session_options(o);
        m.path = unique_path(o, "mixed");
        m.clients = o.clients;
        m.duration = parse_wait_duration(o.duration_text).value;
        m.hold = parse_wait_duration(o.hold_text).value;
        m.curator_script = o.curator_script;
        m.kazoo_script = o.kazoo_script;
        m.json = o.json;
        return bench_mixed(m);
    }
    if (o.recipe != "mutex") {
        if (o.curator || o.kazoo)
            std::cerr << "zklock bench: --curator and --kazoo compare the mutex recipe only; ignored\n";
        const auto r = o.recipe == "election"    ? run_election(o)
                       : o.recipe == "semaphore" ? run_semaphore(o)
                                                 : run_rwlock(o);
        print_result(to_json(r), o.json);
        return 0;
    }
    return bench_multi_scenario(o);  // the mutex recipe's scenario left
}

/// What bench says of an error: a missing chroot as every command says it
/// (missing_chroot_text()), else the error (secrets redacted: a server's error
/// may quote the address it was given).
std::string error_text(const zklock::error& e, const std::string& connect) {
    if (e.code() == errc::no_node && !missing_chroot_text(connect).empty()) return failure_text(e.code(), connect);
    return redact_secrets(e.what());
}

/// This process's command line as typed ("zklock bench ...", or
/// "zklock-bench ..." when run directly), for the report: secrets (a password
/// in --postgres, --redis, --redlock, --mysql) redacted.
std::string own_command_line() {
    const std::string all = read_text_file("/proc/self/cmdline");
    std::vector<std::string> argv;
    for (std::size_t start = 0; start < all.size();) {
        auto end = all.find('\0', start);
        if (end == std::string::npos) end = all.size();
        const auto arg = all.substr(start, end - start);
        argv.push_back(argv.empty() ? program_name(arg) : arg);
        start = end + 1;
    }
    return shown_command(argv);
}

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

int run_backend_bench(const bench_options& z, const backend_cli& b, const CLI::App& cmd) {
    backend_bench_options o;
    for (const auto& name : b.backends) {
        if (name == "all") {
            for (const auto n : lock_backend_names())
                if (lock_backend_available(n)) o.backends.emplace_back(n);
            continue;
        }
        if (safety::is_anti_example(name)) {
            std::cerr << "zklock bench: '" << name << "' is an anti-example the safety bench runs (--safety), not a "
                         "backend\n";
            return exit_usage;
        }
        if (!lock_backend_available(name)) {
            std::cerr << "zklock bench: backend '" << name << "' is not built into this zklock\n";
            return exit_usage;
        }
        o.backends.push_back(name);
    }
    std::vector<std::string> unique;
    for (const auto& n : o.backends)
        if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(n);
    o.backends = unique;
    // What the user asked for that runs the backend bench.
    const std::string via = b.report_alone ? "--report" : "--backend";
    if (z.recipe != "mutex" || z.naive || z.curator || z.kazoo || z.confirm_unlock || z.one_thread || z.requeue ||
        z.rounds > 1) {
        std::cerr << "zklock bench: " << via << " compares plain locks: --recipe, --naive, --curator, --kazoo, "
                     "--confirm-unlock, --one-thread, --requeue and --rounds apply to the ZooKeeper bench only\n";
        return exit_usage;
    }
    // The scenarios of ZooKeeper's recipes alone: --backend would measure nothing.
    static const std::map<std::string, std::string> zookeeper_only = {
        {"multi", "ZooKeeper's lock sets"},
        {"mixed", "zklock, Curator and kazoo clients on one ZooKeeper lock"},
        {"waiters", "a long queue on one ZooKeeper lock"},
        {"locks", "many locks held through one ZooKeeper session"}};
    if (const auto it = zookeeper_only.find(z.scenario); it != zookeeper_only.end()) {
        std::cerr << "zklock bench: --scenario " << it->first << " measures " << it->second
                  << ", not " << via << " (with " << via << ": --scenario uncontended, contended, separate or all)\n";
        return exit_usage;
    }
    o.scenario = z.scenario_given ? z.scenario : "all";
    o.clients = z.clients;
    o.sweep = b.sweep;
    if (!b.report.empty() && o.sweep.empty() && !given(cmd, "--clients")) o.sweep = {1, 2, 4, 8, 16};
    o.ops = z.ops;
    o.warmup = z.warmup;
    o.json = z.json;
    o.baselines = b.baselines || !b.report.empty();
    o.report_dir = b.report;
    o.command_line = own_command_line();
    if (z.connect_given) o.zookeeper = z.connect;
    if (!b.redis.empty()) o.redis = b.redis;
    if (!b.redlock.empty()) o.redlock = split_commas(b.redlock);
    if (!b.postgres.empty()) o.postgres = b.postgres;
    if (!b.mysql.empty()) o.mysql = b.mysql;
    if (!b.flock_dir.empty()) o.flock_dir = b.flock_dir;
    if (!b.memcached.empty()) o.memcached = b.memcached;
    if (!b.etcd.empty()) o.etcd = b.etcd;
    o.server_config = z.server_config;
    auto& service = o.service;
    service.ttl = std::chrono::milliseconds(b.ttl_ms);
    if (z.connect_timeout_given || z.connect_given || !b.redis.empty() || !b.redlock.empty() || !b.postgres.empty() ||
        !b.mysql.empty() || !b.memcached.empty() || !b.etcd.empty())
        service.connect_timeout = z.connect_timeout;
    service.zookeeper_auth = z.creds.zookeeper;
    service.zookeeper_acl = z.creds.acl;
    service.redis_user = z.creds.redis_user;
    service.redis_password = z.creds.redis_password;
    service.mysql_user = z.creds.mysql_user;
    service.mysql_password = z.creds.mysql_password;
    // --tls-*: to the servers named by address; the throwaway servers speak plain.
    if (z.creds.tls.enabled()) {
        if (!z.connect_given && b.etcd.empty()) {
            std::cerr << "zklock bench: --tls-ca, --tls-cert, --tls-key and --tls-insecure with --backend apply to "
                         "the servers given by address (-c for ZooKeeper, --etcd): the throwaway servers speak plain\n";
            return exit_usage;
        }
        if (z.connect_given) service.zookeeper_tls = z.creds.tls;
        if (!b.etcd.empty()) service.etcd_tls = z.creds.tls;
    }
    return bench_backends(o);
}

/// `zklock bench --safety`: its options checked (exit 64 before anything runs).
int run_safety_bench(const bench_options& z, const backend_cli& b, const CLI::App& cmd) {
    const auto refuse = [](const std::string& why) {
        std::cerr << "zklock bench: " << why << "\n";
        return exit_usage;
    };
    // The safety bench kills, restarts and partitions its servers: it starts its
    // own, without credentials, and measures no speed.
    for (const char* option : {"--connect", "--connect-timeout", "--redis", "--redlock", "--postgres", "--mysql", "--flock-dir", "--memcached", "--etcd",
                               "--auth-file", "--acl", "--scenario", "--sweep", "--baselines", "--recipe", "--naive", "--curator",
                               "--kazoo", "--confirm-unlock", "--server-config", "--warmup", "--permits", "--read-ratio", "--path"})
        if (given(cmd, option))
            return refuse(std::string(option) + " does not apply with --safety (it starts, kills and restarts its own "
                                                "servers, and measures no speed)");
    safety_bench_options o;
    auto& s = o.settings;
    s.clients = given(cmd, "--clients") ? z.clients : 3;
    s.ttl = std::chrono::milliseconds(given(cmd, "--ttl") ? b.ttl_ms : 1000);
    s.fault_duration = b.fault_ms > 0 ? std::chrono::milliseconds(b.fault_ms) : 3 * s.ttl;
    s.write_interval = std::chrono::milliseconds(b.write_interval_ms);
    s.grants = given(cmd, "--ops") ? z.ops : 4;
    if (const auto why = safety::check_settings(s)) return refuse(*why);
    std::string error;
    o.rows = safety::expand(b.backends.empty() ? std::vector<std::string>{"all"} : b.backends, safety::row_names(),
                            "backend", error);
    if (!error.empty()) return refuse(error);
    o.faults = safety::expand(b.faults.empty() ? std::vector<std::string>{"all"} : b.faults, safety::fault_names(),
                              "fault", error);
    if (!error.empty()) return refuse(error);
    for (auto it = o.rows.begin(); it != o.rows.end();) {
        if (!safety::is_anti_example(*it) && !lock_backend_available(*it)) {
            if (!b.backends.empty() && std::find(b.backends.begin(), b.backends.end(), *it) != b.backends.end())
                return refuse("backend '" + *it + "' is not built into this zklock");
            it = o.rows.erase(it);  // "all": what this zklock has
        } else {
            ++it;
        }
    }
    bool runnable = false;
    for (const auto& row : o.rows)
        for (const auto& fault : o.faults) runnable = runnable || !safety::not_applicable(row, fault);
    if (!runnable) return refuse("none of the faults asked for applies to the backends asked for");
    o.json = z.json;
    o.report_dir = b.report;
    o.command_line = own_command_line();
    return bench_safety(o);
}

/// Why the options do not go together with --scenario mixed (or --duration
/// without it), or nullopt.
std::optional<std::string> mixed_refusal(const bench_options& o, const CLI::App& cmd) {
    if (o.scenario != "mixed")
        return given(cmd, "--duration") || given(cmd, "--hold")
                   ? std::optional<std::string>("--duration and --hold need --scenario mixed")
                   : std::nullopt;
    if (o.recipe != "mutex" || o.naive || o.confirm_unlock)
        return "--scenario mixed runs plain mutexes: no --recipe, --naive or --confirm-unlock";
    if (given(cmd, "--auth-file") || given(cmd, "--acl"))
        return "--scenario mixed: the Curator and kazoo clients take no credentials; run it on a server without auth";
    const auto d = parse_wait_duration(o.duration_text);
    if (!d) return "--duration: " + d.error;
    if (d.value.count() == 0) return "--duration must be more than 0";
    if (const auto h = parse_wait_duration(o.hold_text); !h) return "--hold: " + h.error;
    return std::nullopt;
}

} // namespace zkbench

using namespace zkbench;

std::string default_bench_script(const std::string& relative) {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto installed = (exe.parent_path() / ZKLOCK_BIN_TO_DATA / relative).lexically_normal();
        if (std::filesystem::exists(installed, ec)) return installed.string();
    }
    return std::string(ZKLOCK_SOURCE_DIR) + "/" + relative;
}

bool given(const CLI::App& cmd, const std::string& option) {
    const auto* o = cmd.get_option_no_throw(option);
    return o && o->count() > 0;
}

int run_bench(bench_cli& c, const CLI::App& cmd) {
    auto& o = c.zookeeper;
    auto& b = c.backends;
    o.connect_given = given(cmd, "--connect") || std::getenv("ZKLOCK_CONNECT") != nullptr;
    o.connect_timeout_given = given(cmd, "--connect-timeout");
    ensemble_request servers;
    if (given(cmd, "--ensemble")) servers.ensemble = o.ensemble;
    servers.busy = o.busy;
    servers.scenario = o.scenario;
    servers.recipe = o.recipe;
    servers.connect = given(cmd, "--connect");
    servers.backend = !b.backends.empty();
    servers.report = !b.report.empty();
    servers.safety = b.safety;
    if (const auto why = ensemble_refusal(servers)) {
        std::cerr << "zklock bench: " << *why << "\n";
        return exit_usage;
    }
    if (servers.ensemble) {
        // The bench's own servers, whatever $ZKLOCK_CONNECT says; --report is the peers report.
        o.connect_given = false;
        o.report_dir = b.report;
        o.command_line = own_command_line();
    }
    if (b.safety) {
        try {
            return run_safety_bench(o, b, cmd);
        } catch (const std::exception& e) {
            std::cerr << "zklock bench: " << redact_secrets(e.what()) << "\n";
            return 1;
        }
    }
    if (given(cmd, "--ttl") && b.backends.empty()) {
        std::cerr << "zklock bench: --ttl needs --backend or --safety\n";
        return exit_usage;
    }
    // --report alone: the report of the ZooKeeper backend, for the scenarios asked for.
    if (!b.report.empty() && b.backends.empty() && !servers.ensemble) {
        b.backends = {"zookeeper"};
        b.report_alone = true;
    }
    auto creds = load_credentials(c.auth);
    if (!creds) return exit_usage;
    o.creds = std::move(*creds);
    if (!b.backends.empty()) {
        // Errors are printed here, secrets redacted (a server's error may
        // quote the address it was given).
        try {
            return run_backend_bench(o, b, cmd);
        } catch (const zklock::error& e) {
            std::cerr << "zklock bench: " << error_text(e, o.connect) << "\n";
            return exit_status_for(e.code());
        } catch (const std::exception& e) {
            std::cerr << "zklock bench: " << redact_secrets(e.what()) << "\n";
            return 1;
        }
    }
    if (o.scenario == "separate") {
        std::cerr << "zklock bench: --scenario separate needs --backend\n";
        return exit_usage;
    }
    if (o.one_thread && (o.recipe != "mutex" || (o.scenario != "contended" && o.scenario != "all") || o.confirm_unlock)) {
        std::cerr << "zklock bench: --one-thread runs the contended mutex scenario (contended or all), releasing "
                     "with unlock(): not with --recipe, another scenario or --confirm-unlock\n";
        return exit_usage;
    }
    if (const auto why = mixed_refusal(o, cmd)) {
        std::cerr << "zklock bench: " << *why << "\n";
        return exit_usage;
    }
    try {
        return bench(o);
    } catch (const zklock::error& e) {
        std::cerr << "zklock bench: " << error_text(e, o.connect) << "\n";
        return exit_status_for(e.code());
    }
}

} // namespace zklock::cli
