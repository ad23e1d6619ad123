// zklock::ZooKeeperLockService: the ZooKeeper recipe behind the backend-neutral interface.
#pragma once

#include <zklock/export.hpp>
#include <zklock/lock.hpp>
#include <zklock/session.hpp>

#include <string>

namespace zklock {

/// Makes Locks named `name` as fair ZooKeeper mutexes at `<root>/<name>`
/// (the same queue a zklock::Mutex on that path joins). Capabilities: FIFO, one
/// waiter woken per release, release at session end, fencing tokens (czxid)
/// monotonic across server failover, loss reported.
class ZKLOCK_EXPORT ZooKeeperLockService : public LockService {
public:
    /// `root` must be a valid lock path (errc::invalid_path otherwise).
    explicit ZooKeeperLockService(Session& session, std::string root = "/zklock/locks");
    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;

private:
    Session& session_;
    std::string root_;
};

} // namespace zklock
