#include <zklock/backends.hpp>

#include <zklock/local/flock_lock_service.hpp>
#include <zklock/session.hpp>
#include <zklock/zookeeper_lock_service.hpp>
#ifdef ZKLOCK_HAVE_REDIS
#include <zklock/redis/redis_lock_service.hpp>
#endif
#ifdef ZKLOCK_HAVE_POSTGRES
#include <zklock/postgres/postgres_lock_service.hpp>
#endif
#ifdef ZKLOCK_HAVE_MEMCACHED
#include <zklock/memcached/memcached_lock_service.hpp>
#endif
#ifdef ZKLOCK_HAVE_MYSQL
#include <zklock/mysql/mysql_lock_service.hpp>
#endif

#include <algorithm>
#include <filesystem>

namespace zklock {
namespace {

/// The ZooKeeper service together with the session it borrows.
class owned_zookeeper_service : public LockService {
public:
    explicit owned_zookeeper_service(const BackendOptions& o)
        : session_(make_session(o)), service_(*session_, o.zookeeper_root) {}
    Lock make_lock(const std::string& name) override { return service_.make_lock(name); }
    lock_capabilities capabilities() const noexcept override { return service_.capabilities(); }

private:
    static std::unique_ptr<Session> make_session(const BackendOptions& o) {
        SessionOptions s;
        s.connect = o.zookeeper;
        s.session_timeout = o.zookeeper_session_timeout;
        s.connect_timeout = o.connect_timeout;
        s.auth = o.zookeeper_auth;
        if (o.zookeeper_acl) s.acl = *o.zookeeper_acl;
        s.log = o.log;
        auto session = o.executor ? std::make_unique<Session>(o.executor, s) : std::make_unique<Session>(s);
        session->connect();
        return session;
    }

    std::unique_ptr<Session> session_;  // outlives service_ (declared first)
    ZooKeeperLockService service_;
};

[[noreturn]] void refuse(const std::string& why) { throw error(make_error_code(errc::invalid_argument), "zklock::open_lock_service: " + why); }

} // namespace

const std::vector<std::string_view>& lock_backend_names() {
    static const std::vector<std::string_view> names = {
        "zookeeper",   "redis",          "redlock",   "postgres-lease", "postgres-advisory", "postgres-row",
        "postgres-version", "mysql-lease", "mysql-advisory", "mysql-row", "mysql-version", "flock", "memcached"};
    return names;
}

bool lock_backend_available(std::string_view backend) noexcept {
    if (backend == "zookeeper" || backend == "flock") return true;
#ifdef ZKLOCK_HAVE_REDIS
    if (backend == "redis" || backend == "redlock") return true;
#endif
#ifdef ZKLOCK_HAVE_POSTGRES
    if (backend == "postgres-lease" || backend == "postgres-advisory" || backend == "postgres-row" ||
        backend == "postgres-version")
        return true;
#endif
#ifdef ZKLOCK_HAVE_MEMCACHED
    if (backend == "memcached") return true;
#endif
#ifdef ZKLOCK_HAVE_MYSQL
    if (backend == "mysql-lease" || backend == "mysql-advisory" || backend == "mysql-row" || backend == "mysql-version")
        return true;
#endif
    return false;
}

std::unique_ptr<LockService> open_lock_service(std::string_view backend, const BackendOptions& o) {
    const auto& names = lock_backend_names();
    if (std::find(names.begin(), names.end(), backend) == names.end()) {
        std::string known;
        for (const auto n : names) known += (known.empty() ? "" : ", ") + std::string(n);
        refuse("unknown backend '" + std::string(backend) + "' (known: " + known + ")");
    }
    if (!lock_backend_available(backend))
        refuse("backend '" + std::string(backend) + "' is not built into this zklock (" +
               (backend.starts_with("postgres") ? "ZKLOCK_BUILD_POSTGRES"
                : backend == "memcached"       ? "ZKLOCK_BUILD_MEMCACHED"
                : backend.starts_with("mysql") ? "ZKLOCK_BUILD_MYSQL"
                                               : "ZKLOCK_BUILD_REDIS") +
               "=OFF)");
    if (backend == "zookeeper") return std::make_unique<owned_zookeeper_service>(o);
    if (backend == "flock") {
        std::error_code ec;
        if (!std::filesystem::is_directory(o.flock_directory, ec))
            refuse("flock directory '" + o.flock_directory + "' is not a directory");
        return std::make_unique<FlockLockService>(o.flock_directory, o.executor);
    }
#ifdef ZKLOCK_HAVE_REDIS
    if (backend == "redis" || backend == "redlock") {
        RedisOptions r;
        r.ttl = o.ttl;
        r.connect_timeout = o.connect_timeout;
        r.executor = o.executor;
        r.user = o.redis_user;
        r.password = o.redis_password;
        r.db = o.redis_db;
        r.log = o.log;
        if (backend == "redis") return std::make_unique<RedisLockService>(o.redis, r);
        if (o.redlock.empty()) refuse("redlock needs the address of at least one master");
        return std::make_unique<RedlockService>(o.redlock, r);
    }
#endif
#ifdef ZKLOCK_HAVE_MEMCACHED
    if (backend == "memcached") {
        MemcachedOptions m;
        m.ttl = o.ttl;
        m.connect_timeout = o.connect_timeout;
        m.executor = o.executor;
        m.log = o.log;
        return std::make_unique<MemcachedLockService>(o.memcached, m);
    }
#endif
#ifdef ZKLOCK_HAVE_POSTGRES
    PostgresOptions p;
    p.executor = o.executor;
    p.lease_ttl = o.ttl;
    p.connect_timeout = o.connect_timeout;
    p.log = o.log;
    if (backend == "postgres-lease") return std::make_unique<PostgresLeaseLockService>(o.postgres, p);
    if (backend == "postgres-advisory") return std::make_unique<PostgresAdvisoryLockService>(o.postgres, p);
    if (backend == "postgres-row") return std::make_unique<PostgresRowLockService>(o.postgres, p);
    if (backend == "postgres-version") return std::make_unique<PostgresVersionLockService>(o.postgres, p);
#endif
#ifdef ZKLOCK_HAVE_MYSQL
    if (backend.starts_with("mysql-")) {
        MysqlOptions m;
        m.executor = o.executor;
        m.lease_ttl = o.ttl;
        m.connect_timeout = o.connect_timeout;
        m.user = o.mysql_user;
        m.password = o.mysql_password;
        m.log = o.log;
        if (backend == "mysql-lease") return std::make_unique<MysqlLeaseLockService>(o.mysql, m);
        if (backend == "mysql-advisory") return std::make_unique<MysqlAdvisoryLockService>(o.mysql, m);
        if (backend == "mysql-row") return std::make_unique<MysqlRowLockService>(o.mysql, m);
        if (backend == "mysql-version") return std::make_unique<MysqlVersionLockService>(o.mysql, m);
    }
#endif
    refuse("backend '" + std::string(backend) + "' is not built into this zklock");
}

} // namespace zklock
