// The engine's factory: every queue recipe (Mutex, a Semaphore's permits,
// SharedMutex's sides, LeaderElection, the ZooKeeper lock service) gets its
// places here, each under its own rule, with the input checked before any
// server call.
#pragma once

#include "fsm/lock_node.hpp"

#include <zklock/acl.hpp>
#include <zklock/mutex.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/revocation.hpp>

#include <memory>
#include <optional>
#include <string>
#include <system_error>

namespace zklock::detail {

class session_impl;

/// What a recipe asks of one place in a queue.
struct queue_request {
    std::string path;               ///< the lock path
    queue_rule rule;                ///< who holds, how the node is named, lock-delay, release marks
    std::string node_data;          ///< empty: the session's "<hostname>:<pid>"
    std::optional<acl_list> acl;    ///< none: the session's policy
    bool revocable = false;         ///< MutexOptions::revocable
    revocation_handler on_revocation;  ///< MutexOptions::on_revocation
    /// Set: the recipe found bad input of its own (the place then refuses
    /// every acquire with it, and `refusal_reason` is its failure_detail()).
    std::error_code refusal;
    std::string refusal_reason;
};

/// The request of a place under MutexOptions (node data, ACL, names,
/// lock-delay, release marks, the herd baseline, revocation) and `rule` (its role, permits,
/// read/write rule, directory data).
queue_request request_of(std::string path, MutexOptions options, queue_rule rule = {});

/// A place in the queue of `request.path`. Bad input (the path, the ACL, a
/// naming that cannot spell the rule's role, node data too large for one
/// request) throws zklock::error ("zklock: <reason>: '<path>'") when `ec` is
/// null; otherwise it is stored in `*ec` and the place refuses every acquire
/// with it. A request's own refusal is handled the same way.
QueueLock make_queue_lock(const std::shared_ptr<session_impl>& session, queue_request request, std::error_code* ec);

} // namespace zklock::detail
