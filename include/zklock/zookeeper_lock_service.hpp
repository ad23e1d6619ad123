// zklock::ZooKeeperLockService: the ZooKeeper recipe behind the backend-neutral interface.
#pragma once

#include <zklock/export.hpp>
#include <zklock/lock.hpp>
#include <zklock/session.hpp>

#include <memory>
#include <string>

namespace zklock {

namespace detail {
class session_impl;
}

/// Makes Locks named `name` as fair ZooKeeper mutexes at `<root>/<name>`
/// (the same queue a zklock::Mutex on that path joins). Capabilities: FIFO, one
/// waiter woken per release, release at session end, fencing tokens (czxid)
/// monotonic across server failover, loss reported.
class ZKLOCK_EXPORT ZooKeeperLockService : public LockService {
public:
    /// `root` must be a valid lock path (errc::invalid_path otherwise). The
    /// service and its locks keep the session's state alive, as a Mutex does.
    explicit ZooKeeperLockService(Session& session, std::string root = "/zklock/locks");
    /// Throws zklock::error(errc::invalid_path) for a bad name (validate_lock_name).
    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;

private:
    std::shared_ptr<detail::session_impl> session_;
    std::string root_;
};

} // namespace zklock
