#include "bench_safety_servers.hpp"

#include "bench_safety_plan.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <stdexcept>

namespace zklock::cli::safety {
namespace {

std::string redis_version(testing::RedisServer& server) {
    const auto info = server.command({"INFO", "server"});
    const auto at = info.find("redis_version:");
    if (at == std::string::npos) return "";
    const auto start = at + std::string("redis_version:").size();
    return info.substr(start, info.find('\r', start) - start);
}

void started(const std::string& what, const std::string& where) {
    std::cerr << "zklock bench: started a throwaway " << what << " at " << where << "\n";
}

bool redis_row(const std::string& row) { return row == "redis" || is_anti_example(row); }

}  // namespace

safety_servers::safety_servers(std::chrono::milliseconds ttl) : ttl_(ttl) {}

testing::ZooKeeperServer& safety_servers::zookeeper() {
    if (!zk_) {
        testing::ZooKeeperServerOptions so;
        so.tick_time_ms = 100;
        so.min_session_timeout_ms = 200;
        so.max_session_timeout_ms = std::max(2000, static_cast<int>(2 * ttl_.count()));
        so.extra_config = {"forceSync=no"};
        zk_ = std::make_unique<testing::ZooKeeperServer>(so);
        described_["zookeeper"] = "throwaway ZooKeeper (Debian zookeeper package), one server, tickTime=100, "
                                  "forceSync=no; session timeout " + std::to_string(ttl_.count()) + " ms";
        started("ZooKeeper", zk_->connect_string());
    }
    return *zk_;
}

testing::RedisServer& safety_servers::redis(bool durable) {
    auto& server = durable ? durable_redis_ : redis_;
    if (!server) {
        testing::RedisServerOptions so;
        so.persistence = durable;
        server = std::make_unique<testing::RedisServer>(so);
        const auto version = redis_version(*server);
        described_[durable ? "redis (killed-server)" : "redis"] =
            "throwaway redis-server " + version +
            (durable ? " with appendonly yes, appendfsync always" : " without persistence") + "; TTL " +
            std::to_string(ttl_.count()) + " ms";
        started(durable ? "Redis with persistence" : "Redis", server->connect_string());
    }
    return *server;
}

std::vector<std::unique_ptr<testing::RedisServer>>& safety_servers::redlock() {
    if (redlock_.empty()) {
        for (int i = 0; i < 5; ++i) redlock_.push_back(std::make_unique<testing::RedisServer>());
        described_["redlock"] = "five throwaway redis-server " + redis_version(*redlock_.front()) +
                                " masters without persistence; TTL " + std::to_string(ttl_.count()) + " ms";
        started("five Redis masters for Redlock", redlock_.front()->connect_string() + ",...");
    }
    return redlock_;
}

testing::PostgresServer& safety_servers::postgres() {
    if (!pg_) {
        pg_ = std::make_unique<testing::PostgresServer>();
        auto version = pg_->psql("SHOW server_version");
        while (!version.empty() && std::isspace(static_cast<unsigned char>(version.back()))) version.pop_back();
        described_["postgres"] = "throwaway PostgreSQL " + version + ", fsync=off, shared by the three postgres rows; "
                                 "lease TTL " + std::to_string(ttl_.count()) + " ms";
        started("PostgreSQL", pg_->connect_string());
    }
    return *pg_;
}

const std::string& safety_servers::flock_directory() {
    if (!flock_dir_) {
        flock_dir_.emplace("zklock-safety-flock-");
        flock_path_ = flock_dir_->path().string();
        described_["flock"] = "lock files in a temp directory";
    }
    return flock_path_;
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
    if (row == "flock") {
        flock_directory();
        return {};
    }
    throw std::invalid_argument("no servers for row " + row);
}

nlohmann::json safety_servers::client_config(const std::string& row, const std::vector<std::uint16_t>& via) const {
    const auto at = [](std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); };
    nlohmann::json c = {{"backend", row}, {"ttl_ms", ttl_.count()}};
    if (row == "zookeeper") c["zookeeper"] = at(via.at(0));
    else if (redis_row(row)) c["redis"] = at(via.at(0));
    else if (row == "redlock") {
        std::vector<std::string> masters;
        for (const auto p : via) masters.push_back(at(p));
        c["redlock"] = masters;
    } else if (row.starts_with("postgres"))
        c["postgres"] = "host=127.0.0.1 port=" + std::to_string(via.at(0)) + " user=postgres dbname=postgres";
    else if (row == "flock") c["flock_directory"] = flock_path_;
    return c;
}

testing::ServerProcess& safety_servers::target(const std::string& row, const std::string& fault) {
    if (row == "zookeeper") return zookeeper();
    if (redis_row(row)) return redis(fault == "killed-server");
    if (row == "redlock") return *redlock().front();
    if (row.starts_with("postgres")) return postgres();
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
