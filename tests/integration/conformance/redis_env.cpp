#include "backend_env.hpp"

#include <zklock/redis/redis_lock_service.hpp>
#include <zklock/testing/backend_servers.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zklock::conformance {
namespace {

// ttl 2 s: a dead owner's lock is free about 2 s after its last renewal.
RedisOptions options() {
    RedisOptions o;
    o.ttl = std::chrono::milliseconds(2000);
    return o;
}

std::string key(const std::string& name) { return RedisLockService::key_for(options().key_prefix, name); }

// ":1\r\n" -> 1
std::size_t integer_reply(const std::string& r) { return r.size() > 1 && r[0] == ':' ? std::stoul(r.substr(1)) : 0; }

class RedisEnv : public BackendEnv {
public:
    RedisEnv() : server_(servers_.redis()) {}
    std::unique_ptr<LockService> client() override {
        return std::make_unique<RedisLockService>(server_.connect_string(), options());
    }
    std::unique_ptr<LockService> crashable_client() override {
        return std::make_unique<LinkedClient>(std::vector<std::uint16_t>{server_.port()}, [](const auto& addresses) {
            return std::make_unique<RedisLockService>(addresses.front(), options());
        });
    }
    void crash(LockService& service) override { static_cast<LinkedClient&>(service).crash(); }
    void steal(const std::string& name) override { server_.command({"DEL", key(name)}); }
    std::size_t leftovers(const std::string& name) override { return integer_reply(server_.command({"EXISTS", key(name)})); }

private:
    testing::BackendServers servers_;
    testing::RedisServer& server_;
};

class RedlockEnv : public BackendEnv {
public:
    RedlockEnv() : masters_(servers_.redlock_connect_strings()) {}
    std::unique_ptr<LockService> client() override { return std::make_unique<RedlockService>(masters_, options()); }
    std::unique_ptr<LockService> crashable_client() override {
        std::vector<std::uint16_t> ports;
        for (const auto& s : servers_.redlock()) ports.push_back(s->port());
        return std::make_unique<LinkedClient>(ports, [](const auto& addresses) {
            return std::make_unique<RedlockService>(addresses, options());
        });
    }
    void crash(LockService& service) override { static_cast<LinkedClient&>(service).crash(); }
    void steal(const std::string& name) override {
        for (const auto& s : servers_.redlock()) s->command({"DEL", key(name)});
    }
    std::size_t leftovers(const std::string& name) override {
        std::size_t n = 0;
        for (const auto& s : servers_.redlock()) n += integer_reply(s->command({"EXISTS", key(name)}));
        return n;
    }

private:
    testing::BackendServers servers_;  // five masters
    std::vector<std::string> masters_;
};

const Registration redis_registered("redis", [] { return std::make_unique<RedisEnv>(); });
const Registration redlock_registered("redlock", [] { return std::make_unique<RedlockEnv>(); });

} // namespace
} // namespace zklock::conformance
