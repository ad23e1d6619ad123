// zklock::open_lock_service: a lock service chosen by backend name at run time
// ("zookeeper", "redis", "redlock", "postgres-lease", "postgres-advisory",
// "postgres-row", "postgres-version", "mysql-lease", "mysql-advisory", "mysql-row",
// "mysql-version", "flock", "memcached", "etcd"), for programs that let their operators choose, and
// for `zklock bench --backend`. Target zklock::backends, which links every
// backend library this zklock was built with.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/backends_export.hpp>
#include <zklock/lock.hpp>
#include <zklock/log.hpp>
#include <zklock/tls_options.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock {

/// Where each backend's servers are and how its leases behave. A backend reads
/// only its own fields.
struct BackendOptions {
    /// zookeeper: the connect string ("host:port,host:port[/chroot]").
    std::string zookeeper = "127.0.0.1:2181";
    /// zookeeper: the session timeout (a dead holder's lock is freed after it).
    std::chrono::milliseconds zookeeper_session_timeout{10000};
    /// zookeeper: the parent of the locks' queues (a lock named `n` is `zookeeper_root + "/" + n`).
    std::string zookeeper_root = "/zklock/locks";
    /// zookeeper: who the session authenticates as (SessionOptions::auth,
    /// e.g. {"digest", "alice:secret"}). Default: nobody.
    std::vector<auth_entry> zookeeper_auth;
    /// zookeeper: the ACL of every node the locks create (SessionOptions::acl);
    /// none (default): the session's default, acls::open_unsafe().
    std::optional<acl_list> zookeeper_acl;
    /// zookeeper: TLS to the servers' secure client ports (SessionOptions::tls).
    /// Default: off.
    TlsOptions zookeeper_tls;
    /// redis: the server, "host:port" or "redis://[user:password@]host[:port][/db]"
    /// (see zklock/redis/redis_lock_service.hpp).
    std::string redis = "127.0.0.1:6379";
    /// redlock: each independent master (5 is the usual choice), as `redis`.
    std::vector<std::string> redlock;
    /// redis, redlock: the ACL user (Redis 6+) for servers whose address carries
    /// no credentials; needs redis_password. Default empty: none.
    std::string redis_user;
    /// redis, redlock: the password (requirepass, or redis_user's) for servers
    /// whose address carries no credentials. Default empty: no AUTH.
    std::string redis_password;
    /// redis, redlock: the database for servers whose address names none. Default 0.
    int redis_db = 0;
    /// postgres-*: a libpq connection string ("host=... port=... dbname=..." or a
    /// URI). The password comes from it (password=...), or as libpq finds one
    /// otherwise: $PGPASSWORD, the password file ($PGPASSFILE, ~/.pgpass).
    std::string postgres = "host=127.0.0.1 port=5432";
    /// mysql-*: the server, "mysql://[user[:password]@]host[:port][/database]"
    /// or "host=H port=P user=U password=W database=D" (see
    /// zklock/mysql/mysql_lock_service.hpp; database default "zklock").
    std::string mysql = "mysql://127.0.0.1:3306/zklock";
    /// mysql-*: the user, for an address that names none. Default empty.
    std::string mysql_user;
    /// mysql-*: the password, for an address that gives none (never printed).
    /// Default empty: none.
    std::string mysql_password;
    /// flock: the directory that holds the lock files (it must exist).
    std::string flock_directory = "/tmp";
    /// memcached: the server, "host:port" or "memcached://host[:port]" (no
    /// authentication; see zklock/memcached/memcached_lock_service.hpp).
    std::string memcached = "127.0.0.1:11211";
    /// etcd: the endpoints, "host:port", "http://host:port" or "https://host:port",
    /// or several IP literals separated by commas (see zklock/etcd/etcd_lock_service.hpp).
    std::string etcd = "127.0.0.1:2379";
    /// etcd: the user, when authentication is enabled. Default empty: none.
    std::string etcd_user;
    /// etcd: etcd_user's password (never printed). Default empty.
    std::string etcd_password;
    /// etcd: TLS to the endpoints (EtcdOptions::tls; on when a file is given,
    /// or with https:// endpoints). Default: off.
    TlsOptions etcd_tls;
    /// redis, redlock, postgres-lease, postgres-version, mysql-lease, mysql-version,
    /// memcached, etcd: the lease's time-to-live (memcached, etcd: whole seconds, at least 2).
    std::chrono::milliseconds ttl{10000};
    /// Every backend: how long connecting to a server may take.
    std::chrono::milliseconds connect_timeout{10000};
    /// Where the service's I/O runs; empty (default): its own thread.
    boost::asio::any_io_executor executor;
    /// Every backend but flock: the service's log (SessionOptions::log for
    /// zookeeper, RedisOptions::log, PostgresOptions::log), records up to
    /// `log.level` with the backend's name as source ("zookeeper" and "zklock"
    /// for the ZooKeeper session). Default: none.
    log_sink log;
};

/// Every backend name zklock knows, in a stable order (built or not).
ZKLOCK_BACKENDS_EXPORT const std::vector<std::string_view>& lock_backend_names();

/// True when `backend` is known and its library was built into this zklock
/// (ZKLOCK_BUILD_REDIS, ZKLOCK_BUILD_POSTGRES, ZKLOCK_BUILD_MYSQL,
/// ZKLOCK_BUILD_MEMCACHED and ZKLOCK_BUILD_ETCD select the optional ones).
ZKLOCK_BACKENDS_EXPORT bool lock_backend_available(std::string_view backend) noexcept;

/// A LockService for `backend`. Throws zklock::error(errc::invalid_argument)
/// for an unknown name, a backend this build leaves out, or options the backend
/// refuses (a malformed address, no Redlock masters, a missing flock directory).
/// The zookeeper service connects before returning (zklock::error when no server
/// answers within the session's connect timeout); the others connect at their
/// first acquire, so an unreachable server shows there.
ZKLOCK_BACKENDS_EXPORT std::unique_ptr<LockService> open_lock_service(std::string_view backend, const BackendOptions& options = {});

} // namespace zklock
