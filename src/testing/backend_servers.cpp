#include "zklock/testing/backend_servers.hpp"

#include <stdexcept>

namespace zklock::testing {

BackendServers::BackendServers(BackendServersOptions options) : options_(std::move(options)) {}

// Stops the servers in the reverse order of the members, each in its fixture's way.
BackendServers::~BackendServers() = default;

void BackendServers::started(const std::string& what, const std::string& where) const {
    if (options_.on_start) options_.on_start(what, where);
}

ZooKeeperServer& BackendServers::zookeeper() {
    if (!zookeeper_) {
        zookeeper_ = std::make_unique<ZooKeeperServer>(options_.zookeeper);
        started("ZooKeeper", zookeeper_->connect_string());
    }
    return *zookeeper_;
}

RedisServer& BackendServers::redis() {
    if (!redis_) {
        redis_ = std::make_unique<RedisServer>(options_.redis);
        started("Redis", redis_->connect_string());
    }
    return *redis_;
}

const std::vector<std::unique_ptr<RedisServer>>& BackendServers::redlock() {
    if (redlock_.empty() && options_.redlock_masters > 0) {
        std::vector<std::unique_ptr<RedisServer>> masters;  // all or none: a failed start leaves none
        for (std::size_t i = 0; i < options_.redlock_masters; ++i)
            masters.push_back(std::make_unique<RedisServer>(options_.redis));
        redlock_ = std::move(masters);
        started(std::to_string(redlock_.size()) + " Redis masters for Redlock",
                redlock_.front()->connect_string() + (redlock_.size() > 1 ? ",..." : ""));
    }
    return redlock_;
}

std::vector<std::string> BackendServers::redlock_connect_strings() {
    std::vector<std::string> out;
    for (const auto& m : redlock()) out.push_back(m->connect_string());
    return out;
}

PostgresServer& BackendServers::postgres() {
    if (!postgres_) {
        postgres_ = std::make_unique<PostgresServer>(options_.postgres);
        started("PostgreSQL", postgres_->connect_string());
    }
    return *postgres_;
}

MariaDBServer& BackendServers::mariadb() {
    if (!mariadb_) {
        mariadb_ = std::make_unique<MariaDBServer>(options_.mariadb);
        started("MariaDB", mariadb_->connect_string());
    }
    return *mariadb_;
}

const std::filesystem::path& BackendServers::flock_directory() {
    if (!flock_) flock_.emplace(options_.flock_prefix);
    return flock_->path();
}

MemcachedServer& BackendServers::memcached() {
    if (!memcached_) {
        memcached_ = std::make_unique<MemcachedServer>(options_.memcached);
        started("memcached", memcached_->connect_string());
    }
    return *memcached_;
}

EtcdServer& BackendServers::etcd() {
    if (!etcd_) {
        etcd_ = std::make_unique<EtcdServer>(options_.etcd);
        started("etcd", etcd_->connect_string());
    }
    return *etcd_;
}

void BackendServers::start_for(std::string_view backend) {
    if (backend == "zookeeper") zookeeper();
    else if (backend == "redis") redis();
    else if (backend == "redlock") redlock();
    else if (backend.starts_with("postgres-")) postgres();
    else if (backend.starts_with("mysql-")) mariadb();
    else if (backend == "flock") flock_directory();
    else if (backend == "memcached") memcached();
    else if (backend == "etcd") etcd();
    else throw std::invalid_argument("no servers for backend '" + std::string(backend) + "'");
}

} // namespace zklock::testing
