#include "backend_env.hpp"

#include "../support.hpp"

#include <zklock/etcd/etcd_lock_service.hpp>
#include <zklock/testing/backend_servers.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zklock::conformance {
namespace {

// ttl 2 s: a dead owner's lock is free about 2 s after its last answered keepalive.
EtcdOptions etcd_options() {
    EtcdOptions o;
    o.ttl = std::chrono::milliseconds(2000);
    return o;
}

std::string prefix(const std::string& name) { return EtcdLockService::prefix_for(etcd_options().key_prefix, name); }

class EtcdEnv : public BackendEnv {
public:
    EtcdEnv() : server_(servers_.etcd()) {}
    std::unique_ptr<LockService> client() override {
        return std::make_unique<EtcdLockService>(server_.connect_string(), etcd_options());
    }
    std::unique_ptr<LockService> crashable_client() override {
        return std::make_unique<LinkedClient>(std::vector<std::uint16_t>{server_.port()}, [](const auto& addresses) {
            return std::make_unique<EtcdLockService>(addresses.front(), etcd_options());
        });
    }
    void crash(LockService& service) override { static_cast<LinkedClient&>(service).crash(); }
    // The holder's lease revoked behind its back (an operator's `etcdctl lease revoke`):
    // its key goes with it, and the next keepalive hears that the lease is gone.
    void steal(const std::string& name) override {
        const auto keys = server_.keys(prefix(name));
        if (!keys.empty()) server_.revoke(keys.front().lease);
    }
    std::size_t leftovers(const std::string& name) override { return server_.keys(prefix(name)).size(); }
    bool waits(LockService&, Lock& waiter, const std::string& name, std::size_t waiters, std::string& how) override {
        how = "the prefix holds the holder's key and " + std::to_string(waiters) +
              " waiter key(s), and the waiter holds nothing (it is queued by create revision)";
        return test::wait_until(
            [&] { return server_.keys(prefix(name)).size() == waiters + 1 && !waiter.is_held(); },
            std::chrono::seconds(20));
    }

private:
    testing::BackendServers servers_;
    testing::EtcdServer& server_;
};

const Registration etcd_registered("etcd", [] { return std::make_unique<EtcdEnv>(); });

} // namespace
} // namespace zklock::conformance
