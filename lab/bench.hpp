// What zklock-bench's runs share: the options and entry points of the backend
// bench (--backend: the same scenarios on ZooKeeper, Redis, Redlock,
// PostgreSQL and flock), of --scenario mixed, waiters and locks, the report
// (--report DIR), and the helpers (child processes, files, figures, the machine).
#pragma once

#include <zklock/backends.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::cli {

struct backend_bench_options {
    std::vector<std::string> backends;  ///< names, "all" already expanded
    std::string scenario = "all";       ///< uncontended | contended | separate | all
    int clients = 8;                    ///< contended and separate, without a sweep
    std::vector<int> sweep;             ///< client counts for contended and separate (report: charts)
    int ops = 2000;                     ///< measured acquisitions per run
    int warmup = 20000;                 ///< unmeasured cycles per backend (others: at most 2000)
    bool json = false;
    bool baselines = false;             ///< redis-benchmark and pgbench beside redis and postgres-advisory
    std::string report_dir;             ///< empty: no report
    std::string command_line;           ///< how it was run, for the report (secrets redacted)
    // Connection options; unset: a throwaway server.
    std::optional<std::string> zookeeper, redis, postgres, mysql, flock_dir, memcached, etcd;
    std::optional<std::vector<std::string>> redlock;
    std::vector<std::string> server_config;  ///< extra zoo.cfg lines of the throwaway ZooKeeper
    /// What every backend's service is opened with (the servers' addresses are
    /// filled in as they start): the ttl; --connect-timeout, or its default
    /// when a server of the user's is named, else the library's default
    /// (throwaway servers on a loaded machine); the credentials (--auth-file,
    /// --acl), which throwaway Redis and MariaDB servers require too. Secrets
    /// stay in here: nothing prints them.
    BackendOptions service;
};

int bench_backends(const backend_bench_options& options);

/// --scenario mixed: zklock, Curator and kazoo clients on one lock at once.
struct mixed_bench_options {
    std::string connect;
    SessionOptions session;                  ///< of zklock's clients
    std::string path;                        ///< the one lock path
    int clients = 2;                         ///< clients of each kind
    std::chrono::milliseconds duration{10000};
    std::chrono::microseconds hold{0};       ///< each hold lasts this long (a sleep), in every kind
    bool curator = true, kazoo = true;       ///< run these peers (when they can run here)
    std::string curator_script, kazoo_script;
    bool json = false;
};

int bench_mixed(const mixed_bench_options& options);

/// --scenario waiters (one long queue) and --scenario locks (many locks, one Session).
struct scale_bench_options {
    SessionOptions session;
    MutexOptions mutex;  ///< of every waiter and lock (--no-release-mark)
    std::string path;   ///< waiters: the lock; locks: the parent of the locks
    int waiters = 1000; ///< waiters on the one lock
    int sessions = 20;  ///< sessions the waiters are spread over
    int locks = 10000;  ///< locks held at once through one Session
    /// locks: made, taken and released in a handler on the Session's executor
    /// (as an Asio program running there would) instead of from the bench's thread.
    bool on_session = false;
    bool json = false;
    /// locks: the C client's floors beside (runs/floor.hpp: the same burst,
    /// and one lock's cycle), and zklock's own one-lock cycle through the same
    /// Session, `cycles` times each, so the line gives what pipelining gained.
    bool floor = true;
    int cycles = 2000;
    std::string floor_path;       ///< a path of the floors' own, like `path` (their server and credentials: `session`'s)
};

int bench_waiters(const scale_bench_options& options);
int bench_locks(const scale_bench_options& options);

/// Writes results.json, results.md, the gnuplot data and script and the SVG
/// charts into `dir` (created if missing). Returns false, after saying why on
/// stderr, when gnuplot is missing or fails (the JSON and Markdown are written).
bool write_report(const std::string& dir, const nlohmann::json& report);

/// `s` in single quotes for /bin/sh.
std::string shell_quote(const std::string& s);

/// A command line as a shell would take it, each argument's secrets redacted
/// first (redact_secrets), then quoted when it needs to be: for printing only.
std::string shown_command(const std::vector<std::string>& argv);

/// Runs argv[0] (looked up in PATH; no shell) with `set_env` added to this
/// process's environment and `unset_env` removed, and returns what it wrote to
/// stdout and stderr. nullopt when it cannot start or exits non-zero: then says
/// so on stderr with the command and its output, secrets redacted.
std::optional<std::string> capture(const std::vector<std::string>& argv,
                                   const std::vector<std::pair<std::string, std::string>>& set_env = {},
                                   const std::vector<std::string>& unset_env = {});

/// Says on stderr that the bench started a throwaway `what` at `where` (the
/// BackendServersOptions::on_start of every bench mode).
void say_started(const std::string& what, const std::string& where);

/// Debian's Python, which python3-kazoo installs into: what runs the kazoo client.
inline constexpr const char* kazoo_python = "/usr/bin/python3";
/// Why the kazoo client at `script` (bench/kazoo/kazoo_bench.py) cannot run
/// here, or empty.
std::string kazoo_unavailable(const std::string& script);

/// The p-th percentile (0..1) of `v`; NaN when v is empty.
double percentile(std::vector<double> v, double p);

/// The distinct string values of `key` over `rows`, in order of first appearance.
std::vector<std::string> distinct_values(const nlohmann::json& rows, const char* key);

/// `j[key]` with `precision` decimals, or "-" when it is missing or not a number.
std::string format_field(const nlohmann::json& j, const char* key, int precision = 0);

/// Runs body(i) for i in [0, k) on k threads released at the same moment, and
/// returns that moment once every thread has returned. When a body throws,
/// `on_failure` runs (once, for the first) so that the others can be made to
/// stop; that first exception is rethrown after every thread has been joined.
std::chrono::steady_clock::time_point run_together(int k, const std::function<void(int)>& body,
                                                   const std::function<void()>& on_failure);

/// The whole file at `path` ("" when it cannot be read), through a descriptor
/// opened close-on-exec (std::ifstream's is not).
std::string read_text_file(const std::string& path);
/// Replaces the file at `path` with `text` (created 0644), through a
/// descriptor opened close-on-exec; false when it cannot.
bool write_text_file(const std::string& path, const std::string& text);

/// The current UTC time, ISO 8601 ("2024-05-01T12:00:00Z").
std::string now_utc();

/// This machine for a report: cpu, cpus, memory_gib, kernel, note.
nlohmann::json describe_machine();

/// The JSON line of a ZooKeeper scenario that prints its own (waiters, locks,
/// mixed): {"backend": "zookeeper", "scenario": `scenario`}, to which it adds
/// its figures.
nlohmann::json zookeeper_line(std::string_view scenario);

/// What zklock-bench calls itself, given its argv[0]: "zklock" when zklock
/// ran it (as `zklock bench ...`: zklock passes argv[0] "zklock"), otherwise
/// "zklock-bench". Its usage lines and reports say that name.
std::string program_name(std::string_view argv0);

} // namespace zklock::cli
