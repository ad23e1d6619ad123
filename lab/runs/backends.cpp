// zklock bench --backend: the same scenarios (runs/run.hpp) on every lock
// backend, through the backend-neutral zklock::Lock, each client with its own
// session or connection; uncontended, each release waits for the server's
// answer (the latency a caller pays for a free lock); the servers (the user's,
// or throwaway ones), the servers' own benchmark tools as baselines, the report.
#include "bench.hpp"
#include "runs/result.hpp"
#include "runs/run.hpp"
#include "command.hpp"
#include "common.hpp"

#include <zklock/backends.hpp>
#include <zklock/error.hpp>
#include <zklock/redis_address.hpp>
#include <zklock/secrets.hpp>
#include <zklock/testing/backend_servers.hpp>
#include <zklock/tls_options.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace zklock::cli {
namespace {

using clock_type = bench_clock;

std::string unique_name(const std::string& what) {
    static std::atomic<int> n{0};
    return "bench-" + what + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1000000000) + "-" +
           std::to_string(n++);
}

// --- the servers: the user's, or throwaway ones ---------------------------------

class servers {
public:
    explicit servers(const backend_bench_options& o) : o_(o), options_(o.service), throwaway_(throwaway_options(o)) {
        options_.zookeeper_session_timeout = std::chrono::seconds(10);
    }

    /// The options that reach `backend`'s servers, starting them if needed.
    const BackendOptions& for_backend(const std::string& backend) {
        if (backend == "zookeeper") zookeeper();
        else if (backend == "redis") redis();
        else if (backend == "redlock") redlock();
        else if (backend.starts_with("postgres")) postgres();
        else if (backend.starts_with("mysql")) mysql();
        else if (backend == "flock") flock();
        else if (backend == "memcached") memcached();
        else if (backend == "etcd") etcd();
        return options_;
    }

    /// What each backend ran against, for the report (secrets redacted).
    const nlohmann::json& described() const { return described_; }

    /// The Redis server of the redis backend, and whether it needs a password
    /// (its address's, or the one of the auth file).
    std::string redis_address() const { return options_.redis; }
    bool redis_needs_password() const {
        if (!options_.redis_password.empty()) return true;
        try {
            return parse_redis_address(options_.redis).has_password;
        } catch (const zklock::error&) {
            return false;  // the backend itself says what is wrong with it
        }
    }
    std::string postgres_conninfo() const { return options_.postgres; }
    std::string etcd_endpoints() const { return options_.etcd; }

private:
    // Throwaway servers: ZooKeeper with a 20 s session limit and, unless
    // --server-config says otherwise, the other servers' durability (no fsync
    // on commit); Redis requiring the auth file's Redis credentials, if any.
    static testing::BackendServersOptions throwaway_options(const backend_bench_options& o) {
        testing::BackendServersOptions t;
        t.zookeeper.tick_time_ms = 200;
        t.zookeeper.max_session_timeout_ms = 20000;
        t.zookeeper.extra_config = o.server_config.empty() ? std::vector<std::string>{"forceSync=no"} : o.server_config;
        const auto& credentials = o.service;
        if (!credentials.redis_password.empty()) {
            if (credentials.redis_user.empty() || credentials.redis_user == "default")
                t.redis.password = credentials.redis_password;
            else
                t.redis.users = {{credentials.redis_user, credentials.redis_password}};
        }
        t.mariadb.password = credentials.mysql_password;  // the throwaway's user is "zklock"
        t.flock_prefix = "zklock-bench-flock-";
        t.on_start = say_started;
        return t;
    }

    void zookeeper() {
        if (described_.contains("zookeeper")) return;
        if (o_.zookeeper) {
            options_.zookeeper = *o_.zookeeper;
            described_["zookeeper"] = "at " + *o_.zookeeper;
        } else {
            options_.zookeeper = throwaway_.zookeeper().connect_string();
            std::string config;
            for (const auto& line : throwaway_.options().zookeeper.extra_config) config += " " + line;
            described_["zookeeper"] = "throwaway ZooKeeper (Debian zookeeper package), one server," + config;
        }
    }

    void redis() {
        if (described_.contains("redis")) return;
        if (o_.redis) {
            options_.redis = *o_.redis;
            described_["redis"] = "at " + redact_secrets(*o_.redis);
        } else {
            auto& server = throwaway_.redis();
            options_.redis = server.connect_string();
            described_["redis"] = "throwaway redis-server " + server.version() + ", no persistence" + protection();
        }
    }

    void redlock() {
        if (described_.contains("redlock")) return;
        if (o_.redlock) {
            options_.redlock = *o_.redlock;
            std::string list;
            for (const auto& m : *o_.redlock) list += (list.empty() ? "" : ",") + m;
            described_["redlock"] = "at " + redact_secrets(list);
        } else {
            options_.redlock = throwaway_.redlock_connect_strings();
            described_["redlock"] = "five throwaway redis-server " + throwaway_.redlock().front()->version() +
                                    " masters, no persistence" + protection();
        }
    }

    void postgres() {
        if (described_.contains("postgres-lease")) return;
        std::string where;
        if (o_.postgres) {
            options_.postgres = *o_.postgres;
            where = "at '" + redact_secrets(*o_.postgres) + "'";
        } else {
            auto& server = throwaway_.postgres();
            options_.postgres = server.connect_string();
            where = "throwaway PostgreSQL " + server.version() + ", fsync=off";
        }
        for (const char* b : {"postgres-lease", "postgres-advisory", "postgres-row", "postgres-version"}) described_[b] = where;
    }

    void mysql() {
        if (described_.contains("mysql-lease")) return;
        std::string where;
        if (o_.mysql) {
            options_.mysql = *o_.mysql;
            where = "at '" + redact_secrets(*o_.mysql) + "'";
        } else {
            auto& server = throwaway_.mariadb();
            options_.mysql = server.connect_string();
            options_.mysql_user.clear();  // the throwaway's own user, with the auth file's password
            where = "throwaway MariaDB " + server.version() + ", no binlog, innodb_flush_log_at_trx_commit=2";
        }
        for (const char* b : {"mysql-lease", "mysql-advisory", "mysql-row", "mysql-version"}) described_[b] = where;
    }

    void flock() {
        if (described_.contains("flock")) return;
        if (o_.flock_dir) {
            options_.flock_directory = *o_.flock_dir;
            described_["flock"] = "lock files in " + options_.flock_directory;
        } else {
            options_.flock_directory = throwaway_.flock_directory().string();
            described_["flock"] = "lock files in a temp directory";
        }
    }

    void memcached() {
        if (described_.contains("memcached")) return;
        if (o_.memcached) {
            options_.memcached = *o_.memcached;
            described_["memcached"] = "at " + *o_.memcached;
        } else {
            auto& server = throwaway_.memcached();
            options_.memcached = server.connect_string();
            described_["memcached"] = "throwaway memcached " + server.version() + " (never persistent)";
        }
    }

    void etcd() {
        if (described_.contains("etcd")) return;
        if (o_.etcd) {
            options_.etcd = *o_.etcd;
            described_["etcd"] = "at " + *o_.etcd;
        } else {
            auto& server = throwaway_.etcd();
            options_.etcd = server.connect_string();
            described_["etcd"] = "throwaway etcd " + server.version() + " (one member, fsync on every write)";
        }
    }

    std::string protection() const {
        const auto& c = o_.service;
        if (c.redis_password.empty()) return "";
        return c.redis_user.empty() || c.redis_user == "default" ? ", requirepass" : ", ACL user " + c.redis_user;
    }

    const backend_bench_options& o_;
    BackendOptions options_;
    nlohmann::json described_ = nlohmann::json::object();
    testing::BackendServers throwaway_;
};

// --- baselines: the servers' own benchmark tools ------------------------------------

bool on_path(const std::string& tool) { return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0; }

/// The fields of redis-benchmark --csv's last line: "test","rps","avg_latency_ms","min","p50",...
std::optional<std::vector<std::string>> csv_fields(const std::string& out) {
    std::istringstream in(out);
    std::string line, last;
    while (std::getline(in, line))
        if (line.starts_with("\"") && !line.starts_with("\"test\"")) last = line;
    if (last.empty()) return std::nullopt;
    std::vector<std::string> fields;
    std::size_t pos = 0;
    while (pos < last.size()) {
        const auto open = last.find('"', pos);
        if (open == std::string::npos) break;
        const auto close = last.find('"', open + 1);
        fields.push_back(last.substr(open + 1, close - open - 1));
        pos = close + 1;
    }
    return fields;
}

/// redis-benchmark, one client, one command: its p50 latency in microseconds.
std::optional<double> redis_benchmark_p50(const RedisServerAddress& server, int requests,
                                          const std::vector<std::string>& cmd) {
    std::vector<std::string> argv = {"redis-benchmark", "-h", server.host, "-p", std::to_string(server.port),
                                     "-c", "1", "-r", "1000000000", "-n", std::to_string(requests), "--csv"};
    if (server.db != 0) argv.insert(argv.end(), {"--dbnum", std::to_string(server.db)});
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    const auto out = capture(argv);
    if (!out) return std::nullopt;
    const auto fields = csv_fields(*out);
    if (!fields || fields->size() < 5) {
        std::cerr << "zklock bench: cannot read redis-benchmark's output:\n" << *out;
        return std::nullopt;
    }
    return std::stod((*fields)[4]) * 1000.0;
}

/// A baseline that did not run, and why (for the report).
nlohmann::json skipped(const char* tool, const std::string& why) {
    std::cerr << "zklock bench: no " << tool << " baseline: " << why << "\n";
    return {{"tool", tool}, {"reason", why}};
}

std::optional<nlohmann::json> redis_baseline(const servers& where, int requests, nlohmann::json& not_run) {
    if (!on_path("redis-benchmark")) {
        not_run.push_back(skipped("redis-benchmark", "redis-benchmark not found (Debian redis-tools)"));
        return std::nullopt;
    }
    if (where.redis_needs_password()) {
        // redis-benchmark 7.0 reads no environment variable and no file for its
        // password: -a, --user and -u all put it on its command line.
        not_run.push_back(skipped("redis-benchmark",
                                  "the server needs a password, and redis-benchmark takes one only on its command line "
                                  "(-a, --user, -u), which every local user can read"));
        return std::nullopt;
    }
    RedisServerAddress server;
    try {
        server = parse_redis_address(where.redis_address());
    } catch (const zklock::error& e) {
        not_run.push_back(skipped("redis-benchmark", e.what()));
        return std::nullopt;
    }
    // What the Redis recipe sends at the least: SET NX PX to take the lock and a
    // compare-and-delete script to release it (on a fresh key each time).
    const std::vector<std::string> set = {"SET", "zklock-baseline:__rand_int__", "v", "NX", "PX", "10000"};
    const std::vector<std::string> eval = {
        "EVAL", "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
        "1", "zklock-baseline:__rand_int__", "v"};
    const auto set_p50 = redis_benchmark_p50(server, requests, set);
    const auto eval_p50 = redis_benchmark_p50(server, requests, eval);
    if (!set_p50 || !eval_p50) return std::nullopt;
    return nlohmann::json{{"backend", "redis"},
                          {"tool", "redis-benchmark"},
                          {"measures", "p50 of SET key v NX PX 10000 plus p50 of EVAL compare-and-delete (on a fresh key: the "
                                       "compare fails, no DEL runs), one client; its keys expire after 10 s"},
                          {"set_p50_us", *set_p50},
                          {"eval_p50_us", *eval_p50},
                          {"pair_p50_us", *set_p50 + *eval_p50},
                          {"requests", requests}};
}

std::optional<nlohmann::json> postgres_baseline(const std::string& conninfo, int transactions, nlohmann::json& not_run) {
    if (!on_path("pgbench")) {
        not_run.push_back(skipped("pgbench", "pgbench not found (Debian postgresql-client)"));
        return std::nullopt;
    }
    // pgbench's argv gets the connection string without its password; the
    // password goes into a password file only we may read (PGPASSFILE).
    const auto split = split_conninfo_password(conninfo);
    if (!split) {
        not_run.push_back(skipped("pgbench", "the connection string cannot be passed to pgbench without putting a "
                                             "secret on its command line"));
        return std::nullopt;
    }
    testing::TempDir dir("zklock-pgbench-");
    const auto script = dir.path() / "lock_unlock.sql";
    std::ofstream(script) << "SELECT pg_advisory_lock(4242);\nSELECT pg_advisory_unlock(4242);\n";
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<std::string> unset;
    if (!split->password.empty()) {
        const auto line = pgpass_line(split->password);
        if (!line) {
            not_run.push_back(skipped("pgbench", "a password with a line break cannot go into a password file"));
            return std::nullopt;
        }
        const auto passfile = dir.path() / "pgpass";
        const int fd = ::open(passfile.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || ::write(fd, line->data(), line->size()) != static_cast<ssize_t>(line->size())) {
            if (fd >= 0) ::close(fd);
            not_run.push_back(skipped("pgbench", "cannot write its password file"));
            return std::nullopt;
        }
        ::close(fd);
        env.emplace_back("PGPASSFILE", passfile.string());
        unset.emplace_back("PGPASSWORD");  // it would win over the file
    }
    const auto out = capture({"pgbench", "-n", "-c", "1", "-t", std::to_string(transactions), "-f", script.string(),
                              split->conninfo},
                             env, unset);
    if (!out) return std::nullopt;
    const auto at = out->find("latency average = ");
    if (at == std::string::npos) {
        std::cerr << "zklock bench: cannot read pgbench's output:\n" << redact_secrets(*out);
        return std::nullopt;
    }
    const double ms = std::stod(out->substr(at + std::string("latency average = ").size()));
    return nlohmann::json{{"backend", "postgres-advisory"},
                          {"tool", "pgbench"},
                          {"measures", "mean of SELECT pg_advisory_lock(k); SELECT pg_advisory_unlock(k), one client"},
                          {"pair_mean_us", ms * 1000.0},
                          {"transactions", transactions}};
}

/// `etcdctl lock NAME true`, one after another: etcd's own command-line
/// peer, which runs a command under the lock (the same concurrency.Mutex
/// recipe). Each cycle starts a Go process, connects, grants a lease, queues,
/// runs `true`, releases and revokes: the process start dominates.
std::optional<nlohmann::json> etcdctl_baseline(const servers& where, const TlsOptions& tls, int cycles,
                                               nlohmann::json& not_run) {
    if (!on_path("etcdctl")) {
        not_run.push_back(skipped("etcdctl", "etcdctl not found (Debian etcd-client)"));
        return std::nullopt;
    }
    // coreutils' timeout bounds each cycle: etcdctl lock retries a refused
    // call for ever (a client certificate the server refuses after the
    // handshake, as under TLS 1.3).
    std::vector<std::string> argv{"timeout", "30", "etcdctl", "--endpoints", where.etcd_endpoints(), "--dial-timeout",
                                  "10s"};
    // File names only: etcdctl reads the key itself.
    if (!tls.ca_file.empty()) argv.insert(argv.end(), {"--cacert", tls.ca_file});
    if (!tls.cert_file.empty()) argv.insert(argv.end(), {"--cert", tls.cert_file, "--key", tls.key_file});
    if (tls.insecure) argv.emplace_back("--insecure-skip-tls-verify");
    argv.insert(argv.end(), {"lock", "zklock-baseline/etcdctl", "true"});
    const std::vector<std::pair<std::string, std::string>> env{{"ETCDCTL_API", "3"}};
    const auto start = clock_type::now();
    for (int i = 0; i < cycles; ++i)
        if (!capture(argv, env)) {
            not_run.push_back(skipped("etcdctl", "etcdctl lock failed or took over 30 s (its output is above)"));
            return std::nullopt;
        }
    const double mean = micros(clock_type::now() - start) / cycles;
    return nlohmann::json{{"backend", "etcd"},
                          {"tool", "etcdctl lock"},
                          {"measures", "mean of `etcdctl lock NAME true`, one after another: a Go process started, "
                                       "connected, a lease granted and revoked per cycle, so the process start "
                                       "dominates; it does not stop its command when the lease is lost"},
                          {"target", "none (a process per cycle)"},
                          {"pair_mean_us", mean},
                          {"transactions", cycles}};
}

/// etcd's own Go Mutex (clientv3/concurrency, bench/etcd/run.sh) on the same
/// etcd server, uncontended and with `clients` clients on one prefix, timed
/// as zklock's etcd rows are; beside them the ratios to zklock's rows of this
/// run (`ours`: the results so far).
std::optional<nlohmann::json> etcd_go_mutex_peer(const servers& where, const BackendOptions& service, int ops,
                                                 int clients, const nlohmann::json& ours, nlohmann::json& not_run) {
    const char* tool = "etcd Go Mutex";
    const auto script = default_bench_script("bench/etcd/run.sh");
    if (!std::filesystem::exists(script)) {
        not_run.push_back(skipped(tool, "its harness is missing at " + script));
        return std::nullopt;
    }
    if (!service.etcd_user.empty()) {
        not_run.push_back(skipped(tool, "the server needs a password, and the Go harness takes no credentials"));
        return std::nullopt;
    }
    const auto& tls = service.etcd_tls;
    if (tls.insecure || !tls.verify_host) {
        not_run.push_back(skipped(tool, "the Go harness verifies the server's certificate and host always"));
        return std::nullopt;
    }
    nlohmann::json out{{"backend", "etcd"},
                       {"tool", tool},
                       {"measures", "etcd's clientv3/concurrency.Mutex (Debian golang-etcd-server-dev), one session "
                                    "per client: uncontended, Lock() + Unlock() each answered (as zklock's row); "
                                    "contended, K clients on one prefix, each its own connection and lease"}};
    for (const bool contended : {false, true}) {
        const std::string scenario = contended ? "contended" : "uncontended";
        std::vector<std::string> argv{script, "--connect", where.etcd_endpoints(), "--scenario", scenario,
                                      "--clients", std::to_string(contended ? clients : 1), "--ops",
                                      std::to_string(ops), "--path", unique_name("go-mutex-" + scenario)};
        if (!tls.ca_file.empty()) argv.insert(argv.end(), {"--cacert", tls.ca_file});
        if (!tls.cert_file.empty()) argv.insert(argv.end(), {"--cert", tls.cert_file, "--key", tls.key_file});
        const auto text = capture(argv);
        if (!text) {
            not_run.push_back(skipped(tool, "bench/etcd/run.sh failed (its output is above)"));
            return std::nullopt;
        }
        std::istringstream lines(*text);
        nlohmann::json row;
        for (std::string line; std::getline(lines, line);)
            if (line.starts_with("{")) row = nlohmann::json::parse(line, nullptr, false);
        if (!row.is_object()) {
            not_run.push_back(skipped(tool, "bench/etcd/run.sh printed no result line"));
            return std::nullopt;
        }
        out[scenario] = row;
        // zklock's etcd row of the same scenario and client count, this run.
        for (const auto& r : ours) {
            if (r.value("backend", "") != "etcd" || r.value("scenario", "") != scenario ||
                r.value("clients", 0) != row.value("clients", 0))
                continue;
            if (contended) out["zklock_ops_per_s_vs_go"] = r["ops_per_s"].get<double>() / row["ops_per_s"].get<double>();
            else out["go_p50_vs_zklock"] = row["p50_us"].get<double>() / r["p50_us"].get<double>();
        }
    }
    out["pair_p50_us"] = out["uncontended"]["p50_us"];
    return out;
}

// --- the machine ---------------------------------------------------------------------

/// The mean time for one thread to hand work to another and get the answer back
/// (asio::post, then a std::future): the floor under every blocking call here.
double thread_round_trip_us() {
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread runner([&io] { io.run(); });
    constexpr int rounds = 5000;
    const auto start = clock_type::now();
    for (int i = 0; i < rounds; ++i) {
        std::promise<void> answered;
        auto f = answered.get_future();
        boost::asio::post(io, [&answered] { answered.set_value(); });
        f.get();
    }
    const double mean = micros(clock_type::now() - start) / rounds;
    guard.reset();
    runner.join();
    return mean;
}

nlohmann::json machine(double round_trip_before) {
    auto m = describe_machine();
    m["thread_round_trip_us"] = {{"before", round_trip_before}, {"after", thread_round_trip_us()}};
    return m;
}

// open_lock_service(), with the ZooKeeper backend's connect failures said as
// every command says them (describe_connect_failure(): "connection refused",
// a host that does not resolve, ...).
std::unique_ptr<LockService> open_service(const std::string& backend, const BackendOptions& options) {
    try {
        return open_lock_service(backend, options);
    } catch (const zklock::error& e) {
        if (backend != "zookeeper" ||
            (e.code() != errc::timeout && e.code() != errc::connection_refused && e.code() != errc::auth_failed &&
             e.code() != errc::invalid_argument))
            throw;
        SessionOptions s;
        s.connect = options.zookeeper;
        s.connect_timeout = options.connect_timeout;
        s.auth = options.zookeeper_auth;
        auto failure = describe_connect_failure(s, e.code());
        throw said_error(failure.code, std::move(failure.text));
    }
}

} // namespace

int bench_backends(const backend_bench_options& o) {
    std::vector<int> counts = o.sweep.empty() ? std::vector<int>{o.clients} : o.sweep;
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    const int most = counts.back();
    const bool uncontended = o.scenario == "uncontended" || o.scenario == "all";
    const bool contended = o.scenario == "contended" || o.scenario == "all";
    const bool separate = o.scenario == "separate" || o.scenario == "all";

    const double round_trip_before = o.report_dir.empty() ? 0.0 : thread_round_trip_us();
    servers where(o);
    nlohmann::json results = nlohmann::json::array(), baselines = nlohmann::json::array(),
                   baselines_not_run = nlohmann::json::array(), capabilities = nlohmann::json::object();
    for (const auto& backend : o.backends) {
        const auto& options = where.for_backend(backend);
        const int clients_needed = (contended || separate) ? most : 1;
        std::vector<std::unique_ptr<LockService>> services;
        for (int i = 0; i < clients_needed; ++i) services.push_back(open_service(backend, options));
        const auto caps = services.front()->capabilities();
        if (caps.fair_fifo) note_fifo_backend(backend);
        capabilities[backend] = {{"fair_fifo", caps.fair_fifo},
                                 {"dead_holder", to_string(caps.dead_holder)},
                                 {"fencing_monotonic_across_failover", caps.fencing_monotonic_across_failover},
                                 {"server_wakes_waiters", caps.server_wakes_waiters},
                                 {"wakes_one_waiter", caps.wakes_one_waiter},
                                 {"reports_loss", caps.reports_loss},
                                 {"limits", std::string(caps.limits)}};
        // A fresh ZooKeeper runs interpreted Java for its first thousands of
        // requests; the other servers need far less.
        const int warmup = backend == "zookeeper" ? o.warmup : std::min(o.warmup, 2000);
        if (warmup > 0) {
            auto lock = services.front()->make_lock(unique_name("warmup"));
            warm_up(lock, warmup);
        }
        scenario_options run;
        run.backend = backend;
        run.ops = o.ops;
        if (uncontended) {
            auto lock = services.front()->make_lock(unique_name("uncontended"));
            results.push_back(to_json(run_uncontended(lock, run)));
            print_result(results.back(), o.json);
        }
        // Contended and separate: each client's release returns as unlock() does.
        run.confirm_unlock = false;
        for (const int k : counts) {
            for (const bool apart : {false, true}) {
                if (!(apart ? separate : contended)) continue;
                const std::string shared_name = unique_name("contended");
                std::vector<Lock> locks;
                std::vector<Lock*> clients;
                for (int i = 0; i < k; ++i) {
                    locks.push_back(services[static_cast<std::size_t>(i)]->make_lock(
                        apart ? unique_name("separate") : shared_name));
                }
                for (auto& l : locks) clients.push_back(&l);
                results.push_back(to_json(run_clients(clients, run, apart)));
                print_result(results.back(), o.json);
            }
        }
        if (o.baselines && backend == "redis")
            if (auto b = redis_baseline(where, std::max(o.ops, 10000), baselines_not_run)) baselines.push_back(*b);
        if (o.baselines && backend == "postgres-advisory")
            if (auto b = postgres_baseline(where.postgres_conninfo(), std::max(o.ops, 10000), baselines_not_run))
                baselines.push_back(*b);
        if (o.baselines && backend == "etcd")
            if (auto b = etcdctl_baseline(where, o.service.etcd_tls, std::min(o.ops, 50), baselines_not_run))
                baselines.push_back(*b);
        if (o.baselines && backend == "etcd")
            if (auto b = etcd_go_mutex_peer(where, options, o.ops, most, results, baselines_not_run))
                baselines.push_back(*b);
        print_table();  // this backend's rows, without --json
    }
    for (const auto& b : baselines) {
        if (o.json) std::cout << b.dump() << std::endl;
        else  // what it measures is in the JSON's "measures"
            std::cout << "baseline " << b["tool"].get<std::string>() << " beside " << b["backend"].get<std::string>()
                      << ": " << std::fixed << std::setprecision(0)
                      << (b.contains("pair_p50_us") ? b["pair_p50_us"] : b["pair_mean_us"]).get<double>()
                      << " us a lock and unlock (--json: how it is measured)" << std::endl;
        if (!o.json && b.contains("contended"))
            std::cout << "  contended, " << b["contended"]["clients"].get<int>() << " clients: " << std::fixed
                      << std::setprecision(0) << b["contended"]["ops_per_s"].get<double>() << " acquisitions/s; zklock: "
                      << std::setprecision(2) << b.value("go_p50_vs_zklock", std::nan("")) << "x its p50 speed, "
                      << b.value("zklock_ops_per_s_vs_go", std::nan("")) << "x its contended rate" << std::endl;
    }
    if (o.report_dir.empty()) return 0;
    const nlohmann::json report = {{"command", o.command_line},
                                   {"date", now_utc()},
                                   {"machine", machine(round_trip_before)},
                                   {"servers", where.described()},
                                   {"ops_per_run", o.ops},
                                   {"client_counts", counts},
                                   {"capabilities", capabilities},
                                   {"results", results},
                                   {"baselines", baselines},
                                   {"baselines_not_run", baselines_not_run}};
    return write_report(o.report_dir, report) ? 0 : 1;
}

} // namespace zklock::cli
