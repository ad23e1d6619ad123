#include <zklock/zookeeper_lock_service.hpp>

#include "engine/contender.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/path.hpp"
#include "session/session_access.hpp"

#include <zklock/error.hpp>
#include <zklock/mutex.hpp>

#include <utility>

namespace zklock {

ZooKeeperLockService::ZooKeeperLockService(Session& session, std::string root)
    : session_(detail::session_access::session(session)), root_(std::move(root)) {
    const auto check = detail::validate_lock_path(root_);
    if (!check) throw error(check.error, "zklock::ZooKeeperLockService: " + check.reason + ": '" + root_ + "'");
}

Lock ZooKeeperLockService::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    detail::queue_rule rule;
    rule.mark_releases = MutexOptions{}.mark_release;  // as a Mutex does
    return Lock(detail::contender_engine::make(session_, root_ + "/" + name, std::move(rule), nullptr));
}

lock_capabilities ZooKeeperLockService::capabilities() const noexcept { return detail::zookeeper_capabilities(); }

} // namespace zklock
