// zklock bench --safety: the throwaway servers every row runs against, and
// which of them a fault acts on. The safety bench always starts its own: it
// kills, restarts and partitions them.
//
//   zookeeper          one standalone server (tickTime 100 ms, forceSync=no)
//   redis, naive-*     redis-server without persistence; for killed-server a
//                      second one with appendonly yes and appendfsync always
//   redlock            five redis-server masters without persistence
//   postgres-*         one PostgreSQL (fsync=off), shared by the three rows
//   flock              a temp directory
//
// Started lazily on the calling thread (which must outlive them: see
// testing::ChildProcess), stopped on destruction.
#pragma once

#include <zklock/testing/postgres_server.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/redis_server.hpp>
#include <zklock/testing/zookeeper_server.hpp>

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
    /// A client's configuration (bench_safety_client.cpp) reaching the servers
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
    std::vector<std::unique_ptr<testing::RedisServer>>& redlock();
    testing::PostgresServer& postgres();
    const std::string& flock_directory();

    std::chrono::milliseconds ttl_;
    nlohmann::json described_ = nlohmann::json::object();
    std::unique_ptr<testing::ZooKeeperServer> zk_;
    std::unique_ptr<testing::RedisServer> redis_, durable_redis_;
    std::vector<std::unique_ptr<testing::RedisServer>> redlock_;
    std::unique_ptr<testing::PostgresServer> pg_;
    std::optional<testing::TempDir> flock_dir_;
    std::string flock_path_;
};

}  // namespace zklock::cli::safety
