#include "safety/plan.hpp"

#include <zklock/backends.hpp>

#include <algorithm>
#include <chrono>

namespace zklock::cli::safety {

const std::vector<std::string_view>& row_names() {
    static const std::vector<std::string_view> names = [] {
        auto rows = lock_backend_names();
        rows.insert(rows.end(), {naive_setnx_expire, naive_setnx_getset});
        return rows;
    }();
    return names;
}

bool is_anti_example(std::string_view row) noexcept { return row == naive_setnx_expire || row == naive_setnx_getset; }

bool has_fencing_token(std::string_view row) noexcept { return row != "memcached"; }

std::chrono::milliseconds row_ttl(std::string_view row, std::chrono::milliseconds ttl) noexcept {
    if (row == "etcd") {  // whole seconds, at least 2
        const auto s = std::chrono::ceil<std::chrono::seconds>(ttl);
        return std::max<std::chrono::milliseconds>(s, std::chrono::seconds(2));
    }
    return row == "memcached" ? std::max(ttl, std::chrono::milliseconds(2000)) : ttl;
}

std::string_view row_description(std::string_view row) {
    if (row == "zookeeper") return "zklock's ZooKeeper Mutex; token: the lock node's czxid";
    if (row == "redis") return "zklock's Redis lock (SET NX PX, watchdog renewal, compare-and-delete); token: INCR counter";
    if (row == "redlock") return "zklock's Redlock over five masters; token: the largest of the masters' counters";
    if (row == "postgres-lease") return "zklock's PostgreSQL lease row (TTL on the server's clock); token: a sequence";
    if (row == "postgres-advisory") return "zklock's PostgreSQL session advisory lock; token: a sequence";
    if (row == "postgres-row") return "zklock's PostgreSQL SELECT ... FOR UPDATE in an open transaction; token: a sequence";
    if (row == "postgres-version")
        return "zklock's PostgreSQL version column (read, then UPDATE ... WHERE version = read); token: the version";
    if (row == "mysql-lease")
        return "zklock's MySQL lease row (UNIQUE name, INSERT, sweep of expired rows on the server's clock); token: a "
               "sequence";
    if (row == "mysql-advisory") return "zklock's MySQL GET_LOCK on its own connection; token: a sequence";
    if (row == "mysql-row") return "zklock's MySQL SELECT ... FOR UPDATE in an open InnoDB transaction; token: a sequence";
    if (row == "mysql-version")
        return "zklock's MySQL optimistic version row (read, then UPDATE ... WHERE version = read); token: the version";
    if (row == "flock") return "zklock's flock(2) lock; token: a counter in the lock file";
    if (row == "memcached")
        return "zklock's memcached lock (add, gets+cas renewal, gets+cas+delete release; TTL at least 2 s, whole "
               "seconds); token: none (the fenced copy cannot be used)";
    if (row == "etcd")
        return "zklock's etcd lock (etcd's concurrency.Mutex recipe, a lease per Lock; TTL at least 2 s, whole "
               "seconds); token: the key's create revision. `etcdctl lock NAME CMD` runs the same recipe but never "
               "stops CMD when the lease is lost: CMD's writes need the token checked as much";
    if (row == naive_setnx_expire)
        return "anti-example: SETNX key, then EXPIRE key (two commands); release: DEL key; the holder stops writing "
               "once its own clock says the TTL has passed; token: INCR after the grant (the recipe has none)";
    if (row == naive_setnx_getset)
        return "anti-example: SETNX key <expiry time>; a waiter that reads an expired time takes over with GETSET "
               "(Redis SETNX documentation, \"Handling deadlocks\"); release: DEL key unless its own expiry has "
               "passed; the holder stops writing once its own clock says it expired; token: INCR after the grant";
    return "";
}

const std::vector<std::string_view>& fault_names() {
    static const std::vector<std::string_view> names = {"paused-holder", "killed-holder", "killed-server",
                                                        "restart-without-persistence", "partitioned-client"};
    return names;
}

std::string_view fault_description(std::string_view fault) {
    if (fault == "paused-holder")
        return "the holder's process is stopped (SIGSTOP) after it checked that it still holds the lock and before "
               "its second write, past the lease or session timeout, then continued: it writes at once (the late write)";
    if (fault == "killed-holder")
        return "the holder's process is killed (SIGKILL) before its second write (SETNX+EXPIRE: between its two "
               "commands); nobody releases its lock";
    if (fault == "killed-server")
        return "the server is killed (SIGKILL) while a client holds the lock, and started again on the same data "
               "after the fault's duration (Redis: with appendonly and appendfsync always; Redlock: one of the five "
               "masters, without persistence)";
    if (fault == "restart-without-persistence")
        return "the Redis server (Redlock: one of the five masters) is restarted while a client holds the lock; "
               "without persistence it comes back empty";
    if (fault == "partitioned-client")
        return "the holder's connections to its servers are blackholed (iptables DROP, connections left open) for the "
               "fault's duration, then healed; the holder keeps writing while it believes it holds the lock";
    return "";
}

std::optional<std::string> not_applicable(std::string_view row, std::string_view fault) {
    const bool flock = row == "flock";
    if (flock && (fault == "killed-server" || fault == "restart-without-persistence"))
        return "flock has no server: the kernel keeps the lock";
    if (flock && fault == "partitioned-client") return "flock has no network: every client is on one machine";
    // memcached is never persistent: a restart always comes back empty.
    const bool redis = row == "redis" || row == "redlock" || row == "memcached" || is_anti_example(row);
    if (!redis && fault == "restart-without-persistence")
        return row == "zookeeper"          ? "ZooKeeper always keeps its data (transaction log and snapshots): see killed-server"
               : row.starts_with("mysql") ? "MariaDB always keeps its committed data (InnoDB redo log): see killed-server"
               : row == "etcd"            ? "etcd always keeps its data (its WAL, fsynced): see killed-server"
                                          : "PostgreSQL always keeps its data (WAL): see killed-server";
    return std::nullopt;
}

trigger trigger_of(std::string_view row, std::string_view fault) noexcept {
    return row == naive_setnx_expire && fault == "killed-holder" ? trigger::between_commands : trigger::second_write;
}

std::optional<std::string> check_settings(const safety_settings& s) {
    if (s.clients < 2 || s.clients > 16) return "--clients must be 2 to 16 with --safety (a lock needs two to overlap)";
    if (s.ttl < std::chrono::milliseconds(200) || s.ttl > std::chrono::milliseconds(20000))
        return "--ttl must be 200 to 20000 ms with --safety (it is also the ZooKeeper session timeout)";
    if (s.fault_duration < std::chrono::milliseconds(1) || s.fault_duration > std::chrono::minutes(5))
        return "--fault-duration must be 1 ms to 5 minutes";
    if (s.write_interval < std::chrono::milliseconds(1) || s.write_interval >= s.ttl)
        return "--write-interval must be at least 1 ms and shorter than --ttl";
    if (s.grants < 1 || s.grants > 1000) return "--ops must be 1 to 1000 with --safety (grants before and after the fault)";
    return std::nullopt;
}

std::vector<std::string> expand(const std::vector<std::string>& asked, const std::vector<std::string_view>& known,
                                std::string_view what, std::string& error) {
    std::vector<std::string> out;
    for (const auto& name : asked) {
        if (name != "all" && std::find(known.begin(), known.end(), name) == known.end()) {
            error = "unknown " + std::string(what) + " '" + name + "'";
            return {};
        }
    }
    for (const auto n : known) {
        const bool wanted = std::any_of(asked.begin(), asked.end(), [&](const auto& a) { return a == "all" || a == n; });
        if (wanted) out.emplace_back(n);
    }
    return out;
}

std::chrono::milliseconds recovery_limit(const safety_settings& s) noexcept {
    return std::chrono::milliseconds(2000) + 5 * s.ttl;
}

}  // namespace zklock::cli::safety
