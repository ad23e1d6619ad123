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
#ifdef ZKLOCK_HAVE_ETCD
#include <zklock/etcd/etcd_lock_service.hpp>
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
        s.tls = o.zookeeper_tls;
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

using opener = std::unique_ptr<LockService> (*)(const BackendOptions&);

/// A backend's service options with what every backend takes from
/// BackendOptions: the executor, the connect timeout, the log, and the ttl
/// (into `ttl`).
template <class Options> Options service_options(const BackendOptions& o, std::chrono::milliseconds Options::*ttl) {
    Options s;
    s.*ttl = o.ttl;
    s.connect_timeout = o.connect_timeout;
    s.executor = o.executor;
    s.log = o.log;
    return s;
}

std::unique_ptr<LockService> open_zookeeper(const BackendOptions& o) { return std::make_unique<owned_zookeeper_service>(o); }

std::unique_ptr<LockService> open_flock(const BackendOptions& o) {
    std::error_code ec;
    if (!std::filesystem::is_directory(o.flock_directory, ec))
        refuse("flock directory '" + o.flock_directory + "' is not a directory");
    return std::make_unique<FlockLockService>(o.flock_directory, o.executor);
}

#ifdef ZKLOCK_HAVE_REDIS
#define ZKLOCK_IF_REDIS(opener) opener
RedisOptions redis_options(const BackendOptions& o) {
    auto r = service_options(o, &RedisOptions::ttl);
    r.user = o.redis_user;
    r.password = o.redis_password;
    r.db = o.redis_db;
    return r;
}

std::unique_ptr<LockService> open_redis(const BackendOptions& o) {
    return std::make_unique<RedisLockService>(o.redis, redis_options(o));
}

std::unique_ptr<LockService> open_redlock(const BackendOptions& o) {
    if (o.redlock.empty()) refuse("redlock needs the address of at least one master");
    return std::make_unique<RedlockService>(o.redlock, redis_options(o));
}
#else
#define ZKLOCK_IF_REDIS(opener) nullptr
#endif

#ifdef ZKLOCK_HAVE_POSTGRES
#define ZKLOCK_IF_POSTGRES(opener) opener
template <class Service> std::unique_ptr<LockService> open_postgres(const BackendOptions& o) {
    return std::make_unique<Service>(o.postgres, service_options(o, &PostgresOptions::lease_ttl));
}
#else
#define ZKLOCK_IF_POSTGRES(opener) nullptr
#endif

#ifdef ZKLOCK_HAVE_MYSQL
#define ZKLOCK_IF_MYSQL(opener) opener
template <class Service> std::unique_ptr<LockService> open_mysql(const BackendOptions& o) {
    auto m = service_options(o, &MysqlOptions::lease_ttl);
    m.user = o.mysql_user;
    m.password = o.mysql_password;
    return std::make_unique<Service>(o.mysql, m);
}
#else
#define ZKLOCK_IF_MYSQL(opener) nullptr
#endif

#ifdef ZKLOCK_HAVE_MEMCACHED
#define ZKLOCK_IF_MEMCACHED(opener) opener
std::unique_ptr<LockService> open_memcached(const BackendOptions& o) {
    return std::make_unique<MemcachedLockService>(o.memcached, service_options(o, &MemcachedOptions::ttl));
}
#else
#define ZKLOCK_IF_MEMCACHED(opener) nullptr
#endif

#ifdef ZKLOCK_HAVE_ETCD
#define ZKLOCK_IF_ETCD(opener) opener
std::unique_ptr<LockService> open_etcd(const BackendOptions& o) {
    auto e = service_options(o, &EtcdOptions::ttl);
    e.user = o.etcd_user;
    e.password = o.etcd_password;
    e.tls = o.etcd_tls;
    return std::make_unique<EtcdLockService>(o.etcd, e);
}
#else
#define ZKLOCK_IF_ETCD(opener) nullptr
#endif

/// One backend: its name, the CMake option that builds it (empty: always
/// built), and what opens it (nullptr: not built into this zklock).
struct backend_entry {
    std::string_view name;
    std::string_view build_option;
    opener open;
};

/// Every backend, in lock_backend_names()' order.
const std::vector<backend_entry>& backends() {
    static const std::vector<backend_entry> table = {
        {"zookeeper", "", open_zookeeper},
        {"redis", "ZKLOCK_BUILD_REDIS", ZKLOCK_IF_REDIS(open_redis)},
        {"redlock", "ZKLOCK_BUILD_REDIS", ZKLOCK_IF_REDIS(open_redlock)},
        {"postgres-lease", "ZKLOCK_BUILD_POSTGRES", ZKLOCK_IF_POSTGRES(open_postgres<PostgresLeaseLockService>)},
        {"postgres-advisory", "ZKLOCK_BUILD_POSTGRES", ZKLOCK_IF_POSTGRES(open_postgres<PostgresAdvisoryLockService>)},
        {"postgres-row", "ZKLOCK_BUILD_POSTGRES", ZKLOCK_IF_POSTGRES(open_postgres<PostgresRowLockService>)},
        {"postgres-version", "ZKLOCK_BUILD_POSTGRES", ZKLOCK_IF_POSTGRES(open_postgres<PostgresVersionLockService>)},
        {"mysql-lease", "ZKLOCK_BUILD_MYSQL", ZKLOCK_IF_MYSQL(open_mysql<MysqlLeaseLockService>)},
        {"mysql-advisory", "ZKLOCK_BUILD_MYSQL", ZKLOCK_IF_MYSQL(open_mysql<MysqlAdvisoryLockService>)},
        {"mysql-row", "ZKLOCK_BUILD_MYSQL", ZKLOCK_IF_MYSQL(open_mysql<MysqlRowLockService>)},
        {"mysql-version", "ZKLOCK_BUILD_MYSQL", ZKLOCK_IF_MYSQL(open_mysql<MysqlVersionLockService>)},
        {"flock", "", open_flock},
        {"memcached", "ZKLOCK_BUILD_MEMCACHED", ZKLOCK_IF_MEMCACHED(open_memcached)},
        {"etcd", "ZKLOCK_BUILD_ETCD", ZKLOCK_IF_ETCD(open_etcd)},
    };
    return table;
}

const backend_entry* find_backend(std::string_view name) noexcept {
    const auto& all = backends();
    const auto it = std::find_if(all.begin(), all.end(), [&](const backend_entry& b) { return b.name == name; });
    return it == all.end() ? nullptr : &*it;
}

} // namespace

const std::vector<std::string_view>& lock_backend_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> out;
        for (const auto& b : backends()) out.push_back(b.name);
        return out;
    }();
    return names;
}

bool lock_backend_available(std::string_view backend) noexcept {
    const auto* b = find_backend(backend);
    return b != nullptr && b->open != nullptr;
}

std::unique_ptr<LockService> open_lock_service(std::string_view backend, const BackendOptions& o) {
    const auto* b = find_backend(backend);
    if (b == nullptr) {
        std::string known;
        for (const auto n : lock_backend_names()) known += (known.empty() ? "" : ", ") + std::string(n);
        refuse("unknown backend '" + std::string(backend) + "' (known: " + known + ")");
    }
    if (b->open == nullptr)
        refuse("backend '" + std::string(backend) + "' is not built into this zklock (" + std::string(b->build_option) +
               "=OFF)");
    return b->open(o);
}

} // namespace zklock
