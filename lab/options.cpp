#include "options.hpp"

#include "common.hpp"
#include "safety/plan.hpp"

#include <string>
#include <vector>

namespace zklock::cli {

void add_zookeeper_options(CLI::App& cmd, bench_cli& c) {
    auto& o = c.zookeeper;
    add_connect_option(cmd, o.connect);
    add_connect_timeout_option(cmd, o.connect_timeout);
    cmd.get_option("--connect-timeout")
        ->description("Give up when a server named by -c, --redis, --redlock, --postgres, --mysql, --memcached or --etcd does not answer within "
                      "TIME: milliseconds (500) or with a unit (500ms, 2s); the throwaway servers the bench starts "
                      "get the library's longer default unless this is given");
    add_auth_options(cmd, c.auth);
    cmd.add_option("--path", o.path, "parent of the bench's lock paths")->capture_default_str();
    cmd.add_option("--warmup", o.warmup, "unmeasured acquire/release cycles that warm the server up first")
        ->check(CLI::Range(0, 10000000))
        ->capture_default_str();
    cmd.add_option("--server-config", o.server_config,
                   "extra zoo.cfg line for the throwaway server, e.g. forceSync=no (repeatable)");
}

void add_json_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--json", c.zookeeper.json,
                 "every figure of each row, one JSON object per line (without it: a table of the main ones)");
}

void add_ops_option(CLI::App& cmd, bench_cli& c, const char* text, bool show_default) {
    auto* ops = cmd.add_option("--ops", c.zookeeper.ops, text)->check(CLI::Range(1, 10000000));
    if (show_default) ops->capture_default_str();
}

void add_clients_option(CLI::App& cmd, bench_cli& c, const char* text, bool show_default) {
    auto* clients = cmd.add_option("--clients", c.zookeeper.clients, text)->check(CLI::Range(1, 1000));
    if (show_default) clients->capture_default_str();
}

namespace {

void add_mutex_options(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--naive", c.zookeeper.naive, "herd baseline: every waiter watches the whole child list");
    cmd.add_flag("!--no-release-mark", c.zookeeper.mark_release,
                 "MutexOptions::mark_release off for zklock's mutexes: a release deletes the node without marking it, "
                 "so the woken successor lists the queue before it holds (the handoff before the mark)")
        ->group(developer_group);
    add_duration_option(cmd, "--lock-delay", c.zookeeper.lock_delay_ms,
                        "MutexOptions::lock_delay for zklock's mutexes (default 0: off): each grant checks its "
                        "handover first, and a release records itself in the lock directory",
                        {std::chrono::milliseconds(0), std::chrono::milliseconds(3600000)}, false);
}

void add_confirm_unlock_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--confirm-unlock", c.zookeeper.confirm_unlock,
                 "unlock waits for the delete to commit (as Curator's release does)");
}

void add_one_thread_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--one-thread", c.zookeeper.one_thread,
                 "contended: every client's Session on one executor that one thread runs, each client taking the "
                 "lock with async_lock and releasing it with unlock() in its handler (as the C client's floor drives "
                 "its handles): the handoff without a thread between a release and the next grant")
        ->group(developer_group);
}

void add_floor_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("!--no-floor", c.zookeeper.floor,
                 "skip the C client's floor loops that run beside the mutex scenarios and give zklock's ratio to "
                 "them: uncontended, delete + create + getChildren pipelined; contended, the same clients on one "
                 "lock, each waiter holding on its predecessor's deletion; locks, the same burst of locks on one "
                 "handle and one lock's cycle");
}

void add_floor_release_proof_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--floor-release-proof", c.zookeeper.floor_release_proof,
                 "contended: the floor's holders release as a Mutex does (one transaction: create and delete the "
                 "node's .released sibling, write the node's data, delete it) and its waiters watch the node and the "
                 "sibling and hold on the sibling's creation: zklock's wire protocol on the C client's leanest loop, "
                 "so the handoff ratio leaves out the release's proof")
        ->group(developer_group);
}

void add_floor_requeue_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--floor-requeue", c.zookeeper.floor_requeue,
                 "uncontended and contended: the plain floors hand the lock back and queue again in one transaction "
                 "(a multi of the release's ops and the next node's create, the listing behind it) where zklock's "
                 "lock() and unlock() send the release and the create apart: what requeue() gains (--requeue runs "
                 "both floors)")
        ->group(developer_group);
}

void add_requeue_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--requeue", c.zookeeper.requeue,
                 "also the requeue rows: zklock's workers taking turns with requeue() (release and queue again in "
                 "one transaction; one worker uncontended, --clients contended) beside the floor doing the same");
}

void add_rounds_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_option("--rounds", c.zookeeper.rounds,
                   "run each scenario's clients (zklock, the floors, the peers) N times in turn, each row "
                   "saying its round, then the median row of each")
        ->type_name("N")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
}

void add_curator_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--curator", c.zookeeper.curator, "also run Apache Curator's InterProcessMutex on the same server");
    cmd.add_option("--curator-warmup", c.zookeeper.curator_warmup,
                   "unmeasured acquisitions in Curator's JVM before its measured ones, contended ones contended "
                   "(its JIT compiled, as in a long-running service)")
        ->type_name("N")
        ->check(CLI::Range(0, 10000000))
        ->capture_default_str();
}

void add_kazoo_option(CLI::App& cmd, bench_cli& c) {
    cmd.add_flag("--kazoo", c.zookeeper.kazoo,
                 "also run kazoo's Lock (python3-kazoo) on the same server, uncontended and contended");
}

void add_script_options(CLI::App& cmd, bench_cli& c) {
    auto& o = c.zookeeper;
    // The defaults are described, not shown: shown, they would name the
    // directory zklock-bench was built in (help and the man page are installed).
    if (o.curator_script.empty()) o.curator_script = default_bench_script("bench/curator/run.sh");
    cmd.add_option("--curator-script", o.curator_script,
                   "the Curator harness (default: bench/curator/run.sh in share/zklock of the installation; in a "
                   "build tree, the source tree's)")
        ->type_name("FILE");
    if (o.kazoo_script.empty()) o.kazoo_script = default_bench_script("bench/kazoo/kazoo_bench.py");
    cmd.add_option("--kazoo-script", o.kazoo_script,
                   "the kazoo client of --kazoo and of mixed (default: bench/kazoo/kazoo_bench.py in "
                   "share/zklock of the installation; in a build tree, the source tree's)")
        ->type_name("FILE");
}

void add_ensemble_options(CLI::App& cmd, bench_cli& c) {
    // Their ranges are checked with the other options' (ensemble/plan.hpp), in one line.
    cmd.add_option("--ensemble", c.zookeeper.ensemble,
                   "start a loopback ensemble of N ZooKeeper servers (3 or 5; 1: a standalone server), fsync on, and "
                   "run each scenario on a follower, then on the leader, zklock, the floor and the peers alike, every "
                   "client of a pass on that server; rows carry server and ensemble; with --report DIR: "
                   "DIR/peers-ensemble-N.md and .json (peers-standalone for 1)")
        ->type_name("N");
    cmd.add_option("--busy", c.zookeeper.busy,
                   "K CPU-bound processes (0 to 16) spin beside the whole measured run, as on a busy host; rows carry "
                   "busy, the report's name ends in -busyK")
        ->type_name("K")
        ->capture_default_str();
}

} // namespace

const std::vector<option_group>& mutex_run_groups() {
    static const std::vector<option_group> groups = {
        {&scenario_takes::mutex, add_mutex_options},
        {&scenario_takes::confirm_unlock, add_confirm_unlock_option},
        {&scenario_takes::one_thread, add_one_thread_option},
        {&scenario_takes::floor, add_floor_option},
        {&scenario_takes::floor_release_proof, add_floor_release_proof_option},
        {&scenario_takes::floor_requeue, add_floor_requeue_option},
        {&scenario_takes::requeue, add_requeue_option},
        {&scenario_takes::rounds, add_rounds_option},
        {&scenario_takes::curator, add_curator_option},
        {&scenario_takes::kazoo, add_kazoo_option},
        {&scenario_takes::scripts, add_script_options},
        {&scenario_takes::ensemble, add_ensemble_options},
    };
    return groups;
}

CLI::Option* add_backend_option(CLI::App& cmd, bench_cli& c, const char* text) {
    // The backends and the safety bench's anti-examples (its rows), or all.
    std::vector<std::string> names{"all"};
    for (const auto row : safety::row_names()) names.emplace_back(row);
    return cmd.add_option("--backend", c.backends.backends, text)->delimiter(',')->check(CLI::IsMember(names));
}

void add_server_options(CLI::App& cmd, bench_cli& c, CLI::Option* backend) {
    auto& b = c.backends;
    cmd.add_option("--redis", b.redis,
                   "with --backend: Redis server host:port or redis://[user:password@]host:port[/db] "
                   "(default: a throwaway server; the auth file's redis: line gives a password too). No TLS: "
                   "Debian's hiredis has none; reach a remote server through a tunnel (stunnel, spiped, ssh -L)")
        ->needs(backend);
    cmd.add_option("--redlock", b.redlock,
                   "with --backend: Redlock masters host:port,host:port,... or redis:// URLs (default: five throwaway "
                   "servers). No TLS, as --redis: a tunnel per master")
        ->needs(backend);
    cmd.add_option("--postgres", b.postgres,
                   "with --backend: libpq connection string (default: a throwaway server); its password may also "
                   "come from PGPASSFILE or PGPASSWORD. TLS: libpq's keys, e.g. sslmode=verify-full "
                   "sslrootcert=FILE (sslcert, sslkey)")
        ->needs(backend);
    cmd.add_option("--memcached", b.memcached,
                   "with --backend: memcached server host:port or memcached://host[:port] (default: a throwaway "
                   "server; memcached has no authentication). No TLS: Debian's libmemcached has none; reach a "
                   "remote server through a tunnel (stunnel, spiped, ssh -L)")
        ->needs(backend);
    cmd.add_option("--etcd", b.etcd,
                   "with --backend: etcd endpoint host:port or http(s)://host:port, or several IPs comma-separated "
                   "(default: a throwaway one-member cluster); https:// or --tls-ca, --tls-cert, --tls-key: over TLS")
        ->needs(backend);
    cmd.add_option("--mysql", b.mysql,
                   "with --backend: MySQL/MariaDB server mysql://[user[:password]@]host[:port][/database] (default: a "
                   "throwaway MariaDB; the auth file's mysql: line gives a user and password too). TLS: "
                   "?ssl_mode=verify_identity&ssl_ca=FILE (ssl_cert, ssl_key), or those keys in the key=value form")
        ->needs(backend);
    cmd.add_option("--flock-dir", b.flock_dir, "with --backend: directory for flock's lock files (default: a temp dir)")
        ->needs(backend);
    cmd.add_option("--sweep", b.sweep,
                   "with --backend: client counts for contended and separate, e.g. 1,2,4,8,16 (default with --report)")
        ->delimiter(',')
        ->check(CLI::Range(1, 1000))
        ->needs(backend);
    cmd.add_flag("--baselines", b.baselines,
                 "with --backend: also run redis-benchmark (SET NX PX + EVAL), pgbench (advisory lock + unlock) and "
                 "etcdctl lock NAME true (a Go process per cycle) and etcd's own Go Mutex (bench/etcd/run.sh, uncontended and "
                 "contended) on the same servers (on with --report)")
        ->needs(backend);
}

void add_ttl_option(CLI::App& cmd, bench_cli& c, const char* text, bool show_default) {
    add_duration_option(cmd, "--ttl", c.backends.ttl_ms, text,
                        {std::chrono::milliseconds(10), std::chrono::milliseconds(3600000)}, show_default);
}

void add_report_option(CLI::App& cmd, bench_cli& c, const char* text) {
    cmd.add_option("--report", c.backends.report, text);
}

} // namespace zklock::cli
