#include "backend_env.hpp"

#include <zklock/memcached/memcached_lock_service.hpp>
#include <zklock/testing/backend_servers.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zklock::conformance {
namespace {

// ttl 2 s (memcached's least): a dead owner's lock is free 1-2 s after its last renewal.
MemcachedOptions memcached_options() {
    MemcachedOptions o;
    o.ttl = std::chrono::milliseconds(2000);
    return o;
}

std::string memcached_key(const std::string& name) {
    return MemcachedLockService::key_for(memcached_options().key_prefix, name);
}

class MemcachedEnv : public BackendEnv {
public:
    MemcachedEnv() : server_(servers_.memcached()) {}
    std::unique_ptr<LockService> client() override {
        return std::make_unique<MemcachedLockService>(server_.connect_string(), memcached_options());
    }
    std::unique_ptr<LockService> crashable_client() override {
        return std::make_unique<LinkedClient>(std::vector<std::uint16_t>{server_.port()}, [](const auto& addresses) {
            return std::make_unique<MemcachedLockService>(addresses.front(), memcached_options());
        });
    }
    void crash(LockService& service) override { static_cast<LinkedClient&>(service).crash(); }
    void steal(const std::string& name) override { server_.command("delete " + memcached_key(name)); }
    std::size_t leftovers(const std::string& name) override {
        return server_.command("get " + memcached_key(name)).starts_with("VALUE ") ? 1 : 0;
    }

private:
    testing::BackendServers servers_;
    testing::MemcachedServer& server_;
};

const Registration memcached_registered("memcached", [] { return std::make_unique<MemcachedEnv>(); });

} // namespace
} // namespace zklock::conformance
