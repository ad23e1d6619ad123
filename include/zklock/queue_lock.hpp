// zklock::QueueLock: one place in a ZooKeeper lock queue, the Lock every queue
// recipe hands out (Mutex, a Semaphore's permit, a SharedMutex's reader and
// writer); and the queries that read a queue from the server.
#pragma once

#include <zklock/detail/deadline.hpp>
#include <zklock/error.hpp>
#include <zklock/export.hpp>
#include <zklock/guarded_write.hpp>
#include <zklock/lock.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/session.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

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

/// One place in the queue of a ZooKeeper lock path: a zklock::Lock (lock,
/// try_lock, try_lock_for, try_lock_until, unlock, the async_ forms, on_lost,
/// async_wait_lost, is_held, fencing_token, stats, failure_detail) with the
/// queue's extras: its node, its position, the queue as the server has it,
/// per-lock events. Every queue recipe hands these out, each under its own rule
/// of who holds: Mutex (the first in line), Semaphore::permit() (the first K),
/// SharedMutex::writer() and reader() (a writer first in line; a reader with no
/// writer ahead).
///
/// Each acquire creates an EPHEMERAL_SEQUENTIAL node under path() (parents are
/// created as CONTAINER nodes); a waiter watches only the node(s) its rule
/// waits for, so a release wakes one waiter, and grants follow arrival order.
///
/// Guarantees:
/// - A cancelled, timed-out or failed acquire leaves no node: the node is deleted
///   before the acquire completes when connected; when not, the session owns the
///   delete and retries it until it commits or the session is gone. The acquire
///   completes at the latest one session timeout after its deadline (or its
///   cancellation), even when the server takes the delete and answers nothing;
///   the session then keeps the delete.
/// - unlock() returns at once; the session owns the delete until it commits or the
///   session ends (either way the lock is released).
/// - Loss is reported (on_lost, async_wait_lost, is_held() turning false) when the
///   session expires (errc::session_expired), when someone else deletes our node
///   (errc::node_deleted), when the connection stays suspended longer than the
///   session timeout and SessionOptions::lose_locks_on_suspension is on
///   (errc::connection_suspended), or when the Session closes (errc::session_closed).
///   When our node disappears, is_held() turns false at once; the reason follows
///   once known: a holder paused past its session timeout reads the server's
///   deletion of its node before the session's end, and is told session_expired,
///   not node_deleted. The holder watches its node from 10-15 ms into the hold
///   (a shorter hold costs no watch): a deletion before then is reported then.
/// - The fencing token is the czxid of our node while held: it increases across
///   every holder of every lock on the ensemble, and keeps increasing when the
///   lock's parent is deleted and re-created (sequence numbers restart then).
///
/// A QueueLock is one place in the queue: it holds or waits at most once at a
/// time (a second acquire fails with errc::already_acquiring). It keeps the
/// session's state alive, so it may outlive the Session object: destroying the
/// Session closes the session (a held lock is lost: session_closed) and every
/// later blocking acquire fails with errc::session_closed (asynchronous ones
/// complete through the session's executor, which a Session with its own thread
/// no longer runs).
///
/// Thread-safety: members may be called from any thread. Blocking members need the
/// session's executor to be run by another thread (a Session without an executor
/// runs its own); called on that thread they fail with errc::would_deadlock.
class ZKLOCK_EXPORT QueueLock : public Lock {
public:
    QueueLock(const QueueLock&) = delete;
    QueueLock& operator=(const QueueLock&) = delete;
    /// Moves the place (held or not); the moved-from object may only be
    /// destroyed or assigned to.
    QueueLock(QueueLock&&) noexcept = default;
    /// Releases what this object holds or waits for, then takes `other`'s.
    QueueLock& operator=(QueueLock&&) noexcept = default;

    /// The lock path given at construction.
    const std::string& path() const noexcept { return subject(); }
    /// Full path of our node while acquiring (once created) or held; empty otherwise.
    std::string node_path() const;
    /// Our place in the queue as of the last listing (0 = first), none when not queued.
    std::optional<std::size_t> queue_position() const noexcept;

    /// Calls `callback(position)` on the session's executor when this object's
    /// place in the queue (0 = first) is read anew and differs from the last one:
    /// after the create, and each time a watched node goes and the queue is listed
    /// again. Nodes leaving further ahead do not wake a waiter, so between two
    /// listings the real place may be lower than the last one reported.
    void on_queue_position(std::function<void(std::size_t)> callback);
    /// Calls `callback(event)` on the session's executor for each event of this
    /// object: queued (with its position), moved (a new position), granted (the
    /// wait, the fencing token), released and lost (the hold's length, the
    /// loss reason), left (an acquire that queued and ended without a grant).
    /// For metrics: lock_metrics::handler() counts them per path and renders the
    /// Prometheus text format (include/zklock/lock_events.hpp). Register before
    /// acquiring; what the callback refers to must outlive the Session (a
    /// destroyed lock that held reports its release too). An event runs before
    /// the completion handler of the operation that caused it, but a blocking
    /// call (lock(), unlock()) may return before the event has run.
    void on_event(std::function<void(const lock_event&)> callback);

    /// The queue of this lock as the server has it now (blocking; see
    /// list_contenders()). Errors: thrown as zklock::error, or in `ec`.
    ///@{
    std::vector<contender> contenders() const;
    std::vector<contender> contenders(std::error_code& ec) const;
    ///@}

    /// Commits `ops` in one ZooKeeper transaction that also checks that this
    /// hold's node still exists: all of them while the lock is held, none once
    /// it is not (see commit_guarded() in guarded_write.hpp for the errors).
    /// errc::not_held, and nothing sent, when this object does not hold.
    /// Blocking. Errors: thrown as zklock::error, or in `ec`.
    ///@{
    guarded_result commit_guarded(const std::vector<guarded_op>& ops);
    guarded_result commit_guarded(const std::vector<guarded_op>& ops, std::error_code& ec);
    ///@}

    /// Asks whoever holds this lock now to let go (cooperative revocation,
    /// revocation.hpp): writes a revocation request into each holder's node
    /// under this recipe's rule (the first in line; a semaphore's first K; the
    /// readers ahead of the first writer, or that writer), never into ours.
    /// Returns the nodes asked (full paths), none when nobody else holds. A
    /// revocable holder lets go (or calls its handler); another keeps the
    /// lock. Blocking. Errors: thrown as zklock::error, or in `ec` (as
    /// request_revocation()); a holder gone before its request is not an error.
    ///@{
    std::vector<std::string> revoke_holders();
    std::vector<std::string> revoke_holders(std::error_code& ec);
    ///@}
    /// Hands the lock on and queues again, in one ZooKeeper transaction: it
    /// releases this hold's node exactly as unlock() does (the release mark,
    /// the `.released` proof, lock-delay's record: a waiter of any library sees
    /// an ordinary release) and creates this object's next node at the tail of
    /// the queue, then waits for the grant as lock() does. For workers that
    /// take turns: a turn costs one transaction where unlock() and lock() cost
    /// two. The multi applies whole or not at all.
    ///
    /// FIFO stays strict: the new node's sequence number is assigned after
    /// every node already queued (Curator's, kazoo's, go-zookeeper's too), so
    /// every waiter is granted before this object's next turn. Under a
    /// semaphore the permit goes back and the new node queues behind the
    /// others; a SharedMutex's reader or writer requeues on its side.
    ///
    /// The new node carries a guid of its own: when the connection drops with
    /// the multi in flight, the lock finds it by that guid once connected (the
    /// multi applied: queued) or sends the multi again (it did not: the held
    /// node is still there, still ours).
    ///
    /// is_held() is false from the call on; the "released" event comes, then
    /// "queued" and "granted" as for lock(). Errors: errc::not_held (nothing
    /// sent) when this object does not hold; errc::node_deleted when the held
    /// node went before the multi applied (the hold was lost); the session's
    /// errors as lock()'s (session_expired, session_closed, ...). A failed or
    /// cancelled requeue leaves nothing behind: the held node is released as
    /// unlock() releases it, the new one deleted. Thread-safety as lock().
    /// Thrown as zklock::error, or in `ec`.
    ///@{
    void requeue();
    void requeue(std::error_code& ec);
    ///@}
    /// As requeue(), waiting at most `timeout` for the next grant: false when
    /// it passed (nothing held, nothing left behind; the old hold is released
    /// either way). A timeout of zero or less tries once (as try_lock()).
    /// Errors: thrown, or in `ec`.
    ///@{
    template <class Rep, class Period> bool try_requeue_for(const std::chrono::duration<Rep, Period>& timeout) {
        std::error_code ec;
        const bool ok = requeue_blocking(detail::deadline_after(timeout), ec);
        throw_requeue_failure(ec, "try_requeue_for");
        return ok;
    }
    template <class Rep, class Period>
    bool try_requeue_for(const std::chrono::duration<Rep, Period>& timeout, std::error_code& ec) {
        return requeue_blocking(detail::deadline_after(timeout), ec);
    }
    ///@}
    /// requeue(), asynchronously. Signature: void(std::error_code), once held
    /// again. Cancellation (terminal, partial, total) as async_lock(): the wait
    /// stops, nothing is left behind (the old hold is released either way),
    /// the handler gets std::errc::operation_canceled.
    template <class CompletionToken> auto async_requeue(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_requeue_impl(std::move(handler)); }, token);
    }
    /// async_requeue() with a deadline. Signature: void(std::error_code, bool
    /// acquired); acquired is false, without an error, when `timeout` passed.
    template <class Rep, class Period, class CompletionToken>
    auto async_try_requeue_for(const std::chrono::duration<Rep, Period>& timeout, CompletionToken&& token) {
        const auto deadline = detail::deadline_after(timeout);
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, bool)>(
            [this, deadline](auto handler) { async_try_requeue_impl(deadline, std::move(handler)); }, token);
    }
private:
    friend struct detail::engine_access;  // the recipes make their places through the engine's factory
    ZKLOCK_NO_EXPORT QueueLock(std::shared_ptr<detail::contender_engine> engine, std::string path);
    bool requeue_blocking(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec);
    /// Throws zklock::error for `ec` (if set), failure_detail() in its message.
    void throw_requeue_failure(const std::error_code& ec, const char* op) const;
    void async_requeue_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);
    void async_try_requeue_impl(std::optional<std::chrono::steady_clock::time_point> deadline,
                                boost::asio::any_completion_handler<void(std::error_code, bool)> handler);

    std::shared_ptr<detail::contender_engine> engine_;
};

/// The queue of the lock at `path` (contender nodes of every dialect zklock
/// reads, in order), read from the server: one getChildren and one getData per
/// node, pipelined. Blocking; an absent path gives an empty queue, and
/// errc::no_node says that the connect string's chroot does not exist. Errors:
/// thrown as zklock::error, or in `ec` (errc::invalid_path for a bad path,
/// errc::would_deadlock on the session's own thread, the server's).
///@{
ZKLOCK_EXPORT std::vector<contender> list_contenders(Session& session, const std::string& path);
ZKLOCK_EXPORT std::vector<contender> list_contenders(Session& session, const std::string& path, std::error_code& ec);
///@}

/// A lock's children as a status query sees them.
struct queue_listing {
    std::vector<contender> contenders;  ///< the queue, holder first (as list_contenders)
    std::vector<std::string> foreign;   ///< children no dialect recognises (not in the queue), sorted by name
    /// False when the lock path does not exist on the server: nobody has made
    /// it (a mistyped path), or the server removed the lock's node once it was
    /// empty (zklock makes it a container). True for an existing one, whether
    /// or not anybody contends for it. The queue is empty when it is false.
    bool path_exists = true;
};

/// list_contenders(), plus the children that are not contenders. Errors as
/// list_contenders().
///@{
ZKLOCK_EXPORT queue_listing list_queue(Session& session, const std::string& path);
ZKLOCK_EXPORT queue_listing list_queue(Session& session, const std::string& path, std::error_code& ec);
///@}

} // namespace zklock
