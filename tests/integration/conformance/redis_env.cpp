#include "backend_env.hpp"

#include <zklock/redis/redis_lock_service.hpp>
#include <zklock/testing/redis_server.hpp>

#include <memory>
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
    std::unique_ptr<LockService> client() override {
        return std::make_unique<RedisLockService>(server_.connect_string(), options());
    }
    void crash(LockService& service) override { static_cast<RedisLockService&>(service).abandon_for_testing(); }
    void steal(const std::string& name) override { server_.command({"DEL", key(name)}); }
    std::size_t leftovers(const std::string& name) override { return integer_reply(server_.command({"EXISTS", key(name)})); }

private:
    testing::RedisServer server_;
};

class RedlockEnv : public BackendEnv {
public:
    RedlockEnv() {
        for (int i = 0; i < 5; ++i) servers_.push_back(std::make_unique<testing::RedisServer>());
    }
    std::unique_ptr<LockService> client() override {
        std::vector<std::string> masters;
        for (const auto& s : servers_) masters.push_back(s->connect_string());
        return std::make_unique<RedlockService>(masters, options());
    }
    void crash(LockService& service) override { static_cast<RedlockService&>(service).abandon_for_testing(); }
    void steal(const std::string& name) override {
        for (const auto& s : servers_) s->command({"DEL", key(name)});
    }
    std::size_t leftovers(const std::string& name) override {
        std::size_t n = 0;
        for (const auto& s : servers_) n += integer_reply(s->command({"EXISTS", key(name)}));
        return n;
    }

private:
    std::vector<std::unique_ptr<testing::RedisServer>> servers_;
};

const Registration redis_registered("redis", [] { return std::make_unique<RedisEnv>(); });
const Registration redlock_registered("redlock", [] { return std::make_unique<RedlockEnv>(); });

} // namespace
} // namespace zklock::conformance
