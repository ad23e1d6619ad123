// A backend under the conformance suite: its servers, clients and faults.
#pragma once

#include <zklock/lock.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace zklock::conformance {

/// One backend with the real servers it needs, started for one test.
class BackendEnv {
public:
    virtual ~BackendEnv() = default;
    /// A new, independent client (its own session or connection).
    virtual std::unique_ptr<LockService> client() = 0;
    /// Makes `service`'s client vanish as a crashed process would: no release, no
    /// goodbye. Its locks must then be freed the backend's way (capabilities().dead_holder).
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
};

using EnvFactory = std::function<std::unique_ptr<BackendEnv>()>;

/// The backends the suite runs over: name -> factory. Each backend's file adds
/// itself with a static Registration.
std::map<std::string, EnvFactory>& registry();

struct Registration {
    Registration(const std::string& name, EnvFactory factory) { registry().emplace(name, std::move(factory)); }
};

} // namespace zklock::conformance
