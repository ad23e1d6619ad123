// zklock::MultiMutex: several ZooKeeper locks taken as one, without deadlock.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/error.hpp>
#include <zklock/export.hpp>
#include <zklock/guarded_write.hpp>
#include <zklock/lock.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/revocation.hpp>
#include <zklock/session.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock {

namespace detail {
class contender_engine;
struct engine_access;
}

/// Options of a MultiMutex.
struct MultiMutexOptions {
    /// Data stored in each of the set's nodes, before the list of the set's
    /// lock paths (which `zklock status` shows). Default (empty):
    /// "<hostname>:<pid>". Too large for one request: errc::invalid_argument.
    std::string node_data;
    /// ACL of the nodes, lock directories and container parents this lock
    /// creates. Default (none): the session's policy, SessionOptions::acl.
    std::optional<acl_list> acl;
    /// Lock-delay, as MutexOptions::lock_delay, in every queue of the set: the
    /// set waits this long before it holds when any of its queues was handed
    /// over by a loss.
    std::chrono::milliseconds lock_delay{0};
    /// Cooperative revocation of the set (MutexOptions::revocable): a request
    /// written into any of the set's nodes asks the whole set to let go (a set
    /// is held as one). On: it lets go of every lock (the hold ends as a loss,
    /// errc::revoked), or calls on_revocation. Off (the default): the request is
    /// reported and ignored.
    bool revocable = false;
    /// With `revocable`: the handler instead of letting go, as
    /// MutexOptions::on_revocation (the request names the path whose node was asked).
    revocation_handler on_revocation;
};

/// Several fair ZooKeeper locks taken as one: all of them or none.
///
/// One `multi` transaction creates an EPHEMERAL_SEQUENTIAL node
/// `_c_<guid>-lock-<seq>` (one guid for the set) under every lock path, and the
/// set is held when its node is first in every queue. A waiter watches its
/// predecessor in each queue where it is not first. Because the transaction
/// gives every node of the set one place in the servers' single commit order,
/// every queue orders any two sets the same way, so no two MultiMutex clients
/// can each wait for the other: no deadlock, whatever order the caller lists
/// the paths in, and grants are FIFO across the locks (docs/design.md has the
/// argument). An uncontended acquire costs two round trips (the transaction
/// with the listings behind it, then the read of its zxid: a create inside a
/// transaction returns no Stat).
///
/// Each node is an ordinary mutex node, so a MultiMutex queues fairly with
/// plain Mutex (a set of one), SharedMutex (it counts as a writer) and the
/// peers' locks on the same paths, which wait for it as for any node ahead.
/// The no-deadlock argument covers the clients that take all their locks in one
/// acquire; a client that holds a lock and then waits for another outside a
/// MultiMutex can still form a cycle with it.
///
/// Guarantees (as Mutex's, for the whole set):
/// - A cancelled, timed-out or failed acquire leaves no node in any directory;
///   connection loss while the transaction is in flight is recovered by the
///   guid in every directory (the transaction committed everywhere or nowhere).
/// - Release and cancellation delete every node with one transaction.
/// - Losing any node of the set loses the set (on_lost, async_wait_lost,
///   is_held() false), and the set's other nodes are deleted.
///
/// Input: the paths are validated before any server call; an empty set, a
/// path given twice and a path under another path of the set (nested) are
/// errc::invalid_path.
///
/// Thread-safety, blocking members, keeping the session alive, Lockable /
/// TimedLockable: as Mutex.
class ZKLOCK_EXPORT MultiMutex : public Lock {
public:
    /// Throws zklock::error (errc::invalid_path, errc::invalid_argument) on bad input.
    MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options = {});
    /// Same, reporting bad input in `ec` (every acquire then fails with it).
    MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options, std::error_code& ec);
    MultiMutex(const MultiMutex&) = delete;
    MultiMutex& operator=(const MultiMutex&) = delete;
    /// Moves the set (held or not); the moved-from object may only be
    /// destroyed or assigned to.
    MultiMutex(MultiMutex&&) noexcept = default;
    /// Releases what this object holds or waits for, then takes `other`'s.
    MultiMutex& operator=(MultiMutex&&) noexcept = default;

    // Lock's members act on the whole set: try_lock acquires only if every
    // lock is free right now; unlock and async_unlock delete every node with
    // one transaction; fencing_token() is, while held, the zxid of the
    // transaction that created the set's nodes (the czxid of every one of
    // them), comparable with the tokens of every lock of the ensemble.

    /// The lock paths, in the order given.
    const std::vector<std::string>& paths() const noexcept { return paths_; }
    /// Per lock path, our node's full path while acquiring (once created) or held.
    std::vector<std::string> node_paths() const;
    /// Per lock path, our place in its queue as of its last listing (0 = first).
    std::vector<std::optional<std::size_t>> queue_positions() const;
    /// Calls `callback(position)` on the session's executor when the set's
    /// place, the farthest of its places in its queues (0 = first in every
    /// one), is read anew and differs from the last one (as
    /// QueueLock::on_queue_position).
    void on_queue_position(std::function<void(std::size_t)> callback);
    /// Calls `callback(event)` on the session's executor for each event of the
    /// set, as QueueLock::on_event. The event's path is the set's paths joined
    /// with commas; its position the farthest of its queues. Register before
    /// acquiring.
    void on_event(std::function<void(const lock_event&)> callback);
    /// Commits `ops` in one ZooKeeper transaction that also checks that this
    /// hold's node still exists: all of them while the lock is held, none once
    /// it is not (see commit_guarded() in guarded_write.hpp for the errors).
    /// errc::not_held, and nothing sent, when this object does not hold.
    /// Blocking. Errors: thrown as zklock::error, or in `ec`.
    ///@{
    guarded_result commit_guarded(const std::vector<guarded_op>& ops);
    guarded_result commit_guarded(const std::vector<guarded_op>& ops, std::error_code& ec);
    ///@}
    /// Asks whoever holds any of the set's locks now to let go (cooperative
    /// revocation, revocation.hpp): writes a revocation request into the node
    /// that holds each lock path (the first of its queue), never into ours.
    /// Returns the nodes asked (full paths), none when nobody else holds.
    /// Blocking. Errors: thrown as zklock::error, or in `ec` (as
    /// request_revocation()); a holder gone before its request is not an error.
    ///@{
    std::vector<std::string> revoke_holders();
    std::vector<std::string> revoke_holders(std::error_code& ec);
    ///@}

private:
    friend struct detail::engine_access;
    MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options, std::error_code* ec);
    ZKLOCK_NO_EXPORT MultiMutex(std::shared_ptr<detail::contender_engine> engine, std::vector<std::string> paths);

    std::vector<std::string> paths_;
    std::shared_ptr<detail::contender_engine> engine_;
};

} // namespace zklock
