// zklock::Semaphore: at most K holders at once, granted in arrival order.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/export.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/node_names.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/revocation.hpp>
#include <zklock/session.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock {

namespace detail {
class session_impl;
}

/// Options of a Semaphore.
struct SemaphoreOptions {
    /// Data stored in each permit's node. Default (empty): "<hostname>:<pid>".
    /// Too large for one request: errc::invalid_argument (see MutexOptions::node_data).
    std::string node_data;
    /// ACL of the permits' nodes, the semaphore's directory and its container
    /// parents. Default (none): the session's policy, SessionOptions::acl.
    std::optional<acl_list> acl;
    /// Only node_names::zklock: no peer library's semaphore queues on lock nodes
    /// (docs/interop.md). Any other naming is refused at construction with
    /// errc::invalid_argument.
    node_names names = node_names::zklock;
    /// Lock-delay, as MutexOptions::lock_delay. With several holders a
    /// handover is judged conservatively: when more than one permit ended
    /// between two listings, the next grant waits.
    std::chrono::milliseconds lock_delay{0};
    /// Cooperative revocation of each permit, as MutexOptions::revocable: a
    /// permit holder asked to let go (request_revocation(), revoke_holders(),
    /// `zklock revoke`) honours the request when on, ignores it when off (the
    /// default).
    bool revocable = false;
    /// With `revocable`: the handler instead of letting go, as
    /// MutexOptions::on_revocation (one for every permit; the request says
    /// which node was asked).
    revocation_handler on_revocation;
};

/// A fair distributed counting semaphore: at most `permits` holders at once on
/// `path`, granted in arrival order. Each holder is a permit, a QueueLock
/// (queue_lock.hpp) made by permit(): lock() waits for one of the K places,
/// unlock() gives it back, and every other form of Lock (try_lock_for,
/// async_lock, async_wait_lost, fencing_token, on_event, ...) works on it.
///
///     zklock::Semaphore slots(session, "/jobs/slots", 4);
///     auto permit = slots.permit();
///     std::unique_lock held(permit);  // one of 4, in arrival order
///
/// A waiter watches the `permits` nodes just ahead of it (the deletion of any
/// one of them can grant it a place, whichever holder releases first); when
/// holders release in arrival order, each release still wakes one waiter.
///
/// The permit count is stored as the data of the lock directory: a participant
/// that asks for a different count fails with errc::permits_mismatch instead of
/// over-admitting (the directory is a container: it disappears when the last
/// permit goes, and the next participant sets the count again). A path that holds
/// another library's semaphore (Curator's InterProcessSemaphoreV2, kazoo's
/// Semaphore) fails with errc::foreign_recipe: each would admit its own permits.
///
/// The Semaphore keeps the session's state alive, as its permits do.
/// Thread-safety: members may be called from any thread.
class ZKLOCK_EXPORT Semaphore {
public:
    /// Throws zklock::error: errc::invalid_path, or errc::invalid_argument for 0
    /// permits, more than 2^31-1 permits, node data too large, an invalid ACL or
    /// SemaphoreOptions::names other than node_names::zklock.
    Semaphore(Session& session, std::string path, std::size_t permits, SemaphoreOptions options = {});
    /// Same, reporting bad input in `ec` (every permit's acquire then fails
    /// with that error, and its failure_detail() says why).
    Semaphore(Session& session, std::string path, std::size_t permits, SemaphoreOptions options,
              std::error_code& ec);

    /// A new contender for one permit (FIFO with every other one): lock() waits
    /// for a place among the first permits(), unlock() gives it back. Each call
    /// makes a new contender; one holds at most one place at a time.
    QueueLock permit() const;

    /// How many holders the semaphore admits at once.
    std::size_t permits() const noexcept { return permits_; }
    /// The semaphore's path.
    const std::string& path() const noexcept { return path_; }
    /// The queue as the server has it now (blocking): the first permits() hold.
    /// Errors: thrown as zklock::error, or in `ec`.
    ///@{
    std::vector<contender> contenders() const;
    std::vector<contender> contenders(std::error_code& ec) const;
    ///@}

private:
    std::shared_ptr<detail::session_impl> session_;
    std::string path_;
    std::size_t permits_;
    SemaphoreOptions options_;
    std::error_code refusal_;     // bad input found by the error_code constructor
    std::string refusal_reason_;
};

/// The permit count a zklock Semaphore keeps on `path` (the lock directory's
/// data, "permits=K"), read from the server: with it a reader of the queue
/// (`zklock status`) tells which K contenders hold. Blocking, one getData.
/// Returns nullopt, without an error, when the path is absent or keeps no count
/// (a mutex, a read-write lock, a peer's recipe). Errors (thrown as
/// zklock::error, or in `ec`): errc::invalid_path, errc::would_deadlock (called
/// on the session's own thread), and the server's (errc::no_auth, a
/// connection loss, ...).
///@{
ZKLOCK_EXPORT std::optional<std::size_t> stored_permits(Session& session, const std::string& path);
ZKLOCK_EXPORT std::optional<std::size_t> stored_permits(Session& session, const std::string& path,
                                                        std::error_code& ec);
///@}

} // namespace zklock
