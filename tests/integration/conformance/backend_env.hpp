// A backend under the conformance suite: its servers, clients and faults.
#pragma once

#include <zklock/lock.hpp>
#include <zklock/testing/faulty_link.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zklock::conformance {

/// One backend with the real servers it needs, started for one test.
class BackendEnv {
public:
    virtual ~BackendEnv() = default;
    /// A new, independent client (its own session or connection).
    virtual std::unique_ptr<LockService> client() = 0;
    /// A client that crash() can make vanish (client() unless the backend needs
    /// its connections to run through something that can cut them).
    virtual std::unique_ptr<LockService> crashable_client() { return client(); }
    /// Makes `service`'s client (a crashable_client()) vanish as a crashed
    /// process would: no release, no goodbye. Its locks must then be freed the
    /// backend's way (capabilities().dead_holder).
    virtual void crash(LockService& service) = 0;
    /// Why crash() cannot be done inside this test process (the dead-owner test is
    /// then skipped with this reason and covered by the backend's own test), if so.
    virtual std::optional<std::string> cannot_crash() const { return std::nullopt; }
    /// Takes the lock `name` away from its holder behind its back (an operator
    /// deleting the node, the key expiring, the connection terminated).
    virtual void steal(const std::string& name) = 0;
    /// What the backend keeps on its servers for lock `name` (nodes, keys, rows
    /// held): 0 when nothing is held or queued.
    virtual std::size_t leftovers(const std::string& name) = 0;
    /// Waits (deadline 20 s) until the backend shows `waiter`, a lock of
    /// `client`'s on `name`, waiting behind the holder, with `waiters` waiting
    /// in all where the servers tell; false when it does not. `how` says what
    /// was checked. A waiter seen so can only be granted by what the holder
    /// does next. The default, for backends whose waiters leave no trace on the
    /// servers (they ask again): `waiter` has asked twice and holds nothing, so
    /// it was refused at least once after the holder's grant.
    virtual bool waits(LockService& client, Lock& waiter, const std::string& name, std::size_t waiters,
                       std::string& how);
};

/// A client whose connections run through FaultyLinks (one per server), so
/// that it can vanish as a crashed process does: crash() closes the links, so
/// the servers see its connections end and its new ones are refused (nothing
/// listens at their ports any more). For the backends whose client is a
/// connection to a server (Redis, Redlock, PostgreSQL).
class LinkedClient : public LockService {
public:
    /// `open(addresses)` makes the service from the links' "127.0.0.1:PORT"s.
    LinkedClient(const std::vector<std::uint16_t>& ports,
                 const std::function<std::unique_ptr<LockService>(const std::vector<std::string>&)>& open) {
        std::vector<std::string> addresses;
        for (const auto port : ports) {
            links_.push_back(std::make_unique<testing::FaultyLink>(port));
            addresses.push_back(links_.back()->connect_string());
        }
        service_ = open(addresses);
    }
    Lock make_lock(const std::string& name) override { return service_->make_lock(name); }
    lock_capabilities capabilities() const noexcept override { return service_->capabilities(); }
    void crash() { links_.clear(); }

private:
    std::vector<std::unique_ptr<testing::FaultyLink>> links_;
    std::unique_ptr<LockService> service_;
};

using EnvFactory = std::function<std::unique_ptr<BackendEnv>()>;

/// The backends the suite runs over: name -> factory. Each backend's file adds
/// itself with a static Registration.
std::map<std::string, EnvFactory>& registry();

struct Registration {
    Registration(const std::string& name, EnvFactory factory) { registry().emplace(name, std::move(factory)); }
};

} // namespace zklock::conformance
