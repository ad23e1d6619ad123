// zklock bench --safety: the throwaway servers every row runs against, and
// which of them a fault acts on. The safety bench always starts its own: it
// kills, restarts and partitions them.
//
//   zookeeper          one standalone server (tickTime 100 ms, forceSync=no)
//   redis, naive-*     redis-server without persistence; for killed-server a
//                      second one with appendonly yes and appendfsync always
//   redlock            five redis-server masters without persistence
//   postgres-*         one PostgreSQL (fsync=off), shared by the three rows
//   mysql-*            one MariaDB (innodb_flush_log_at_trx_commit=2), shared by the four rows
//   flock              a temp directory
//
// Started lazily on the calling thread (which must outlive them: see
// testing::ChildProcess), stopped on destruction.
#pragma once

#include <zklock/testing/backend_servers.hpp>
#include <zklock/testing/mariadb_server.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zklock::cli::safety {

class safety_servers {
public:
    explicit safety_servers(std::chrono::milliseconds ttl);

    /// The loopback ports a client of `row` talks to under `fault`, starting
    /// the servers when needed (flock: none).
    std::vector<std::uint16_t> ports(const std::string& row, const std::string& fault);
    /// A client's configuration (safety/client.cpp) reaching the servers
    /// of ports() through `via`: the same ports, or a FaultyLink's for each.
    nlohmann::json client_config(const std::string& row, const std::vector<std::uint16_t>& via) const;
    /// The server killed-server and restart-without-persistence act on (Redlock:
    /// the first master).
    testing::ServerProcess& target(const std::string& row, const std::string& fault);
    /// PTTL of `key` on the Redis server of `row` under `fault`: -1 for a key
    /// without expiry, -2 for none; nullopt when it cannot be asked.
    std::optional<long long> pttl(const std::string& row, const std::string& fault, const std::string& key);
    /// What each row ran against, for the report.
    const nlohmann::json& described() const { return described_; }

private:
    testing::ZooKeeperServer& zookeeper();
    testing::RedisServer& redis(bool durable);
    const std::vector<std::unique_ptr<testing::RedisServer>>& redlock();
    testing::PostgresServer& postgres();
    testing::MariaDBServer& mariadb();
    const std::string& flock_directory();
    testing::MemcachedServer& memcached();
    testing::EtcdServer& etcd();

    static testing::BackendServersOptions throwaway_options(std::chrono::milliseconds ttl);

    std::chrono::milliseconds ttl_;
    nlohmann::json described_ = nlohmann::json::object();
    testing::BackendServers servers_;
    std::unique_ptr<testing::RedisServer> durable_redis_;  ///< killed-server's: appendonly, appendfsync always
    std::string flock_path_;
};

}  // namespace zklock::cli::safety
