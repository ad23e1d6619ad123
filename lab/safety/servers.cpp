#include "safety/servers.hpp"

#include "bench.hpp"
#include "safety/plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace zklock::cli::safety {
namespace {

bool redis_row(const std::string& row) { return row == "redis" || is_anti_example(row); }

}  // namespace

// ZooKeeper: tickTime 100 ms, sessions from 200 ms to twice the TTL (at least
// 2 s), no fsync; Redis without persistence (the killed-server row's durable one
// is started here); PostgreSQL with fsync off (the fixture's default).
testing::BackendServersOptions safety_servers::throwaway_options(std::chrono::milliseconds ttl) {
    testing::BackendServersOptions t;
    t.zookeeper.tick_time_ms = 100;
    t.zookeeper.min_session_timeout_ms = 200;
    t.zookeeper.max_session_timeout_ms = std::max(2000, static_cast<int>(2 * ttl.count()));
    t.zookeeper.extra_config = {"forceSync=no"};
    t.flock_prefix = "zklock-safety-flock-";
    t.on_start = say_started;
    return t;
}

safety_servers::safety_servers(std::chrono::milliseconds ttl) : ttl_(ttl), servers_(throwaway_options(ttl)) {}

testing::ZooKeeperServer& safety_servers::zookeeper() {
    auto& server = servers_.zookeeper();
    if (!described_.contains("zookeeper"))
        described_["zookeeper"] = "throwaway ZooKeeper (Debian zookeeper package), one server, tickTime=100, "
                                  "forceSync=no; session timeout " + std::to_string(ttl_.count()) + " ms";
    return server;
}

testing::RedisServer& safety_servers::redis(bool durable) {
    if (!durable) {
        auto& server = servers_.redis();
        if (!described_.contains("redis"))
            described_["redis"] = "throwaway redis-server " + server.version() + " without persistence; TTL " +
                                  std::to_string(ttl_.count()) + " ms";
        return server;
    }
    if (!durable_redis_) {
        testing::RedisServerOptions so;
        so.persistence = true;
        durable_redis_ = std::make_unique<testing::RedisServer>(so);
        described_["redis (killed-server)"] = "throwaway redis-server " + durable_redis_->version() +
                                              " with appendonly yes, appendfsync always; TTL " +
                                              std::to_string(ttl_.count()) + " ms";
        say_started("Redis with persistence", durable_redis_->connect_string());
    }
    return *durable_redis_;
}

const std::vector<std::unique_ptr<testing::RedisServer>>& safety_servers::redlock() {
    const auto& masters = servers_.redlock();
    if (!described_.contains("redlock"))
        described_["redlock"] = "five throwaway redis-server " + masters.front()->version() +
                                " masters without persistence; TTL " + std::to_string(ttl_.count()) + " ms";
    return masters;
}

testing::PostgresServer& safety_servers::postgres() {
    auto& server = servers_.postgres();
    if (!described_.contains("postgres"))
        described_["postgres"] = "throwaway PostgreSQL " + server.version() +
                                 ", fsync=off, shared by the three postgres rows; lease TTL " +
                                 std::to_string(ttl_.count()) + " ms";
    return server;
}

testing::MariaDBServer& safety_servers::mariadb() {
    auto& server = servers_.mariadb();
    if (!described_.contains("mysql"))
        described_["mysql"] = "throwaway MariaDB " + server.version() +
                              ", innodb_flush_log_at_trx_commit=2, shared by the four mysql rows; lease TTL " +
                              std::to_string(ttl_.count()) + " ms";
    return server;
}

const std::string& safety_servers::flock_directory() {
    if (flock_path_.empty()) {
        flock_path_ = servers_.flock_directory().string();
        described_["flock"] = "lock files in a temp directory";
    }
    return flock_path_;
}

testing::MemcachedServer& safety_servers::memcached() {
    auto& server = servers_.memcached();
    if (!described_.contains("memcached"))
        described_["memcached"] = "throwaway memcached " + server.version() + " (never persistent); TTL " +
                                  std::to_string(row_ttl("memcached", ttl_).count()) + " ms (whole seconds, at least 2 s)";
    return server;
}

testing::EtcdServer& safety_servers::etcd() {
    auto& server = servers_.etcd();
    if (!described_.contains("etcd"))
        described_["etcd"] = "throwaway etcd " + server.version() + " (one member, fsync on every write); lease TTL " +
                             std::to_string(row_ttl("etcd", ttl_).count()) + " ms (whole seconds, at least 2 s)";
    return server;
}

std::vector<std::uint16_t> safety_servers::ports(const std::string& row, const std::string& fault) {
    if (row == "zookeeper") return {zookeeper().port()};
    if (redis_row(row)) return {redis(fault == "killed-server").port()};
    if (row == "redlock") {
        std::vector<std::uint16_t> out;
        for (const auto& m : redlock()) out.push_back(m->port());
        return out;
    }
    if (row.starts_with("postgres")) return {postgres().port()};
    if (row == "memcached") return {memcached().port()};
    if (row == "etcd") return {etcd().port()};
    if (row.starts_with("mysql")) return {mariadb().port()};
    if (row == "flock") {
        flock_directory();
        return {};
    }
    throw std::invalid_argument("no servers for row " + row);
}

nlohmann::json safety_servers::client_config(const std::string& row, const std::vector<std::uint16_t>& via) const {
    const auto at = [](std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); };
    nlohmann::json c = {{"backend", row}, {"ttl_ms", row_ttl(row, ttl_).count()}};
    if (row == "zookeeper") c["zookeeper"] = at(via.at(0));
    else if (redis_row(row)) c["redis"] = at(via.at(0));
    else if (row == "redlock") {
        std::vector<std::string> masters;
        for (const auto p : via) masters.push_back(at(p));
        c["redlock"] = masters;
    } else if (row.starts_with("postgres"))
        c["postgres"] = "host=127.0.0.1 port=" + std::to_string(via.at(0)) + " user=postgres dbname=postgres";
    else if (row.starts_with("mysql"))
        c["mysql"] = "mysql://zklock@127.0.0.1:" + std::to_string(via.at(0)) + "/zklock";
    else if (row == "flock") c["flock_directory"] = flock_path_;
    else if (row == "memcached") c["memcached"] = at(via.at(0));
    else if (row == "etcd") c["etcd"] = at(via.at(0));
    return c;
}

testing::ServerProcess& safety_servers::target(const std::string& row, const std::string& fault) {
    if (row == "zookeeper") return zookeeper();
    if (redis_row(row)) return redis(fault == "killed-server");
    if (row == "redlock") return *redlock().front();
    if (row.starts_with("postgres")) return postgres();
    if (row == "memcached") return memcached();
    if (row == "etcd") return etcd();
    if (row.starts_with("mysql")) return mariadb();
    throw std::invalid_argument("no server to fault for row " + row);
}

std::optional<long long> safety_servers::pttl(const std::string& row, const std::string& fault, const std::string& key) {
    if (!redis_row(row)) return std::nullopt;
    try {
        const auto reply = redis(fault == "killed-server").command({"PTTL", key});
        if (!reply.starts_with(":")) return std::nullopt;
        return std::stoll(reply.substr(1));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace zklock::cli::safety
