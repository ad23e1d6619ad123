// Throwaway servers for the lock backends, each started on first use and
// stopped with the object: what `zklock bench`, `zklock bench --safety` and the
// conformance suite run against.
//
//   zookeeper  one standalone ZooKeeperServer
//   redis      one RedisServer
//   redlock    BackendServersOptions::redlock_masters RedisServers (five by default)
//   postgres   one PostgresServer (shared by the three PostgreSQL backends)
//   mariadb    one MariaDBServer (shared by the four MySQL-protocol backends)
//   flock      a temp directory for the lock files
//   memcached  one MemcachedServer
//   etcd       one EtcdServer (a one-member cluster)
//
// Library: zklock::testing_backends (with RedisServer, PostgresServer, MemcachedServer and EtcdServer).
#pragma once

#include <zklock/testing/backends_export.hpp>
#include <zklock/testing/etcd_server.hpp>
#include <zklock/testing/memcached_server.hpp>
#include <zklock/testing/mariadb_server.hpp>
#include <zklock/testing/postgres_server.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/redis_server.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::testing {

/// How BackendServers starts each server.
struct BackendServersOptions {
    ZooKeeperServerOptions zookeeper;  ///< of the ZooKeeper server
    RedisServerOptions redis;          ///< of the Redis server and of each Redlock master
    std::size_t redlock_masters = 5;   ///< how many Redlock masters redlock() starts
    PostgresServerOptions postgres;    ///< of the PostgreSQL server
    MariaDBServerOptions mariadb;      ///< of the MariaDB server
    std::string flock_prefix = "zklock-flock-";  ///< of the flock backend's temp directory
    MemcachedServerOptions memcached;  ///< of the memcached server
    EtcdServerOptions etcd;            ///< of the etcd server
    /// Told of each start, e.g. to print it: what ("ZooKeeper", "Redis", "5
    /// Redis masters for Redlock", "PostgreSQL", "MariaDB", "memcached", "etcd") and where ("127.0.0.1:PORT",
    /// the first master's followed by ",..." for Redlock).
    std::function<void(const std::string& what, const std::string& where)> on_start;
};

/// The servers of every lock backend, each started the first time it is asked
/// for and stopped (with its data) when the object goes.
///
/// Errors: what the fixture's constructor throws (std::runtime_error when a
/// server does not start) comes out of the accessor that started it; the
/// object stays usable, and asking again tries again.
///
/// Thread-safety: not thread-safe; use from one thread, a thread that outlives
/// the object (see ChildProcess: the kernel kills a server when the thread that
/// started it exits).
class ZKLOCK_TESTING_BACKENDS_EXPORT BackendServers {
public:
    /// Starts nothing yet.
    explicit BackendServers(BackendServersOptions options = {});
    /// Stops every server it started (each fixture's graceful stop) and
    /// removes their directories and the flock directory. Never throws.
    ~BackendServers();
    BackendServers(const BackendServers&) = delete;
    BackendServers& operator=(const BackendServers&) = delete;

    /// The ZooKeeper server, started with options().zookeeper.
    ZooKeeperServer& zookeeper();
    /// The Redis server of the redis backend, started with options().redis.
    RedisServer& redis();
    /// The Redlock masters, started with options().redis each.
    const std::vector<std::unique_ptr<RedisServer>>& redlock();
    /// The masters' connect strings ("127.0.0.1:PORT" each), starting them.
    std::vector<std::string> redlock_connect_strings();
    /// The PostgreSQL server, started with options().postgres.
    PostgresServer& postgres();
    /// The MariaDB server, started with options().mariadb.
    MariaDBServer& mariadb();
    /// The flock backend's lock directory, created empty.
    const std::filesystem::path& flock_directory();
    /// The memcached server, started with options().memcached.
    MemcachedServer& memcached();
    /// The etcd server, started with options().etcd.
    EtcdServer& etcd();
    /// Starts what `backend` runs against: "zookeeper", "redis", "redlock",
    /// "postgres-lease", "postgres-advisory", "postgres-row", "postgres-version",
    /// "mysql-lease", "mysql-row", "mysql-advisory", "mysql-version", "flock", "memcached" or "etcd".
    /// Throws std::invalid_argument for another name.
    void start_for(std::string_view backend);

    /// The options it was made with.
    [[nodiscard]] const BackendServersOptions& options() const noexcept { return options_; }

private:
    void started(const std::string& what, const std::string& where) const;

    BackendServersOptions options_;
    std::unique_ptr<ZooKeeperServer> zookeeper_;
    std::unique_ptr<RedisServer> redis_;
    std::vector<std::unique_ptr<RedisServer>> redlock_;
    std::unique_ptr<PostgresServer> postgres_;
    std::unique_ptr<MariaDBServer> mariadb_;
    std::optional<TempDir> flock_;
    std::unique_ptr<MemcachedServer> memcached_;
    std::unique_ptr<EtcdServer> etcd_;
};

} // namespace zklock::testing
