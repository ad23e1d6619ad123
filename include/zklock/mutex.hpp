// zklock::Mutex: the fair ZooKeeper lock, and RecursiveMutex.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/detail/deadline.hpp>
#include <zklock/error.hpp>
#include <zklock/export.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/node_names.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/revocation.hpp>
#include <zklock/session.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

namespace zklock {

/// Options of a Mutex.
struct MutexOptions {
    /// Data stored in the lock node, shown by `zklock status` and contenders().
    /// Default (empty): "<hostname>:<pid>". Data too large for one request to the
    /// server (SessionOptions::max_request_bytes, less the path and ACL) is refused
    /// with errc::invalid_argument before any server call.
    std::string node_data;
    /// ACL of the lock node, the lock directory and the container parents this
    /// lock creates. Default (none): the session's policy, SessionOptions::acl.
    std::optional<acl_list> acl;
    /// Herd baseline, for benchmarks only: every waiter watches the whole child
    /// list instead of its predecessor, so every release wakes every waiter.
    /// Default off.
    bool watch_all_children = false;
    /// How the lock's node is named, so that a peer library's lock on the same
    /// path waits for it (zklock/node_names.hpp has the table). zklock queues
    /// behind every peer's nodes whatever this says. Default node_names::zklock:
    /// `_c_<uuid>-lock-<seq>`, which Apache Curator's InterProcessMutex already
    /// counts; node_names::kazoo: `<32 hex>__lock__<seq>`, counted by kazoo's Lock
    /// without extra_lock_patterns. A SharedMutex names its writer and reader
    /// nodes in the same naming.
    node_names names = node_names::zklock;
    /// Lock-delay (off at zero, the default): when the node that held the lock
    /// went without a clean release (its session expired, someone deleted it),
    /// the next holder waits this long before it is told it holds, so that a
    /// holder paused or cut off has that long to notice it lost the lock
    /// (Chubby's and Consul's lock-delay). A clean release costs no round trip:
    /// it records itself in the lock directory's data in the transaction that
    /// deletes its node (whatever else the directory's data holds stays). A
    /// grant checks the record (one read) and the queue it saw; a doubt counts
    /// as a loss. Give every participant of a path the same value: one that
    /// does not set it records nothing, so its releases look like losses.
    std::chrono::milliseconds lock_delay{0};
    /// The handoff without a listing (on by default). A release marks the
    /// node: the transaction that deletes it writes its data first (empty; no
    /// extra write, one transaction as before). The successor watches that
    /// node, so it is told of a data change; a node that held had nothing ahead
    /// of it and nothing arrives ahead of a waiter, so the successor holds
    /// without listing the queue. A node that goes without the mark
    /// (cancelled, expired, a peer's) makes its successor list the queue. Curator's
    /// InterProcessMutex and kazoo's Lock wake on any event of the node they
    /// watch and list, so they share a path with marking Mutexes. Turn it off
    /// only for a peer on the path that acts on a deletion alone. A waiting
    /// Mutex trusts its predecessor's mark whether or not it marks its own
    /// releases. A data change is only a cue to read that node (one request, no
    /// listing): gone, it released with the mark (the mark and the delete are
    /// one transaction); still there, someone else wrote it (a revocation
    /// request, revocation.hpp) and the waiter waits on.
    bool mark_release = true;
    /// Cooperative revocation (Apache Curator's makeRevocable(); include/
    /// zklock/revocation.hpp). A holder always watches its node (from 10-15 ms
    /// into the hold) and reads a revocation request written into it by
    /// request_revocation(), revoke_holders(), `zklock revoke` or Curator's
    /// Revoker.attemptRevoke(); each request is reported (lock_event
    /// revocation_requested). Off (the default): the request is ignored and the
    /// lock stays held. On: the lock honours it, by calling on_revocation or,
    /// when that is empty, by letting go: the node is deleted as unlock()
    /// deletes it and the hold ends as a loss with errc::revoked (is_held()
    /// false, then on_lost, async_wait_lost and the lost event; a RecursiveMutex
    /// loses every level). A request written while the node waited is honoured
    /// once it is granted. A SharedMutex's reader and writer are both
    /// revocable with it.
    bool revocable = false;
    /// With `revocable`: what to do instead of letting go, called on the
    /// session's executor once per request while held; the lock stays held
    /// until someone calls unlock() (the handler may, or may tell the worker
    /// to finish first). Empty (the default): let go.
    revocation_handler on_revocation;
};

/// A fair, distributed mutual-exclusion lock on a ZooKeeper path: a QueueLock
/// (queue_lock.hpp: every form of Lock, the queue's extras, the guarantees) whose
/// node is `_c_<guid>-lock-<seq>` (or a peer's spelling, MutexOptions::names) and
/// which holds when its node is first in line. A waiter watches only its
/// immediate predecessor, so a release wakes one waiter; grants follow arrival
/// order. An uncontended acquire costs one round trip (getChildren is pipelined
/// behind the create).
///
/// At most one holder per lock path among all sessions, as long as holders stop
/// using the resource when told of loss (or the resource checks fencing tokens:
/// PostgresFence, RedisFence and `zklock fence` check them, fencing.hpp).
///
/// A Mutex object is one place in the queue: give each thread its own Mutex
/// (sharing one Session is fine) or use RecursiveMutex.
///
/// Satisfies Lockable and TimedLockable: std::unique_lock, std::scoped_lock and
/// std::lock_guard work.
class ZKLOCK_EXPORT Mutex : public QueueLock {
public:
    /// `path` is the lock's znode, e.g. "/locks/orders-42". Bad input is refused
    /// here, before any server call: throws zklock::error with a reason and
    /// errc::invalid_path (the path), or errc::invalid_argument (node data too
    /// large, an invalid ACL).
    Mutex(Session& session, std::string path, MutexOptions options = {});
    /// Same, reporting bad input in `ec` (the object is then unusable: every
    /// acquire fails with that error, and failure_detail() says why).
    Mutex(Session& session, std::string path, MutexOptions options, std::error_code& ec);
    /// Moves the lock (held or not); the moved-from object may only be
    /// destroyed or assigned to.
    Mutex(Mutex&&) noexcept = default;
    /// Releases what this object holds or waits for, then takes `other`'s.
    Mutex& operator=(Mutex&&) noexcept = default;
};

/// A Mutex that the thread holding it may lock again (as Curator's
/// InterProcessMutex and Redisson's RLock are): each lock() by the owning thread
/// must be matched by an unlock(); the ZooKeeper node is deleted at the last one.
/// Other threads of the process wait in-process first, then in the queue.
/// A re-entry after the hold was lost (session expired, node deleted, ...) is
/// refused: lock() and the try_ forms fail with the loss reason (the count is
/// not raised; the levels already taken still need their unlock()). Blocking
/// API only, each call thrown or with an error_code. Lockable and TimedLockable.
class ZKLOCK_EXPORT RecursiveMutex {
public:
    /// A recursive lock on `path` (bad input throws, as Mutex's constructor).
    RecursiveMutex(Session& session, std::string path, MutexOptions options = {});
    /// Same, reporting bad input in `ec` (every lock() then throws that error).
    RecursiveMutex(Session& session, std::string path, MutexOptions options, std::error_code& ec);

    /// Blocks until held; the owning thread may call it again (each call needs its unlock()).
    /// Errors: thrown as zklock::error, or in `ec`.
    ///@{
    void lock();
    void lock(std::error_code& ec);
    ///@}
    /// Holds if free now, or again if this thread holds it. Errors: thrown, or in `ec`.
    ///@{
    bool try_lock();
    bool try_lock(std::error_code& ec);
    ///@}
    /// As Lock::try_lock_for, or again at once if this thread holds it.
    /// Errors: thrown, or in `ec`.
    ///@{
    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
        return try_lock_within(detail::deadline_after(timeout));
    }
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout, std::error_code& ec) {
        return acquire(detail::deadline_after(timeout), ec);
    }
    ///@}
    /// As Lock::try_lock_until, or again at once if this thread holds it.
    /// Errors: thrown, or in `ec`.
    ///@{
    template <class Clock, class Duration> bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        return try_lock_within(detail::deadline_at(t));
    }
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t, std::error_code& ec) {
        return acquire(detail::deadline_at(t), ec);
    }
    ///@}
    /// Releases one level; the last releases the lock. Never throws; a call from a
    /// thread that does not own the lock does nothing.
    void unlock() noexcept;

    /// As QueueLock::requeue(): hands the lock on and queues again in one
    /// transaction, then blocks until held again; only at the outermost level
    /// (hold_count() 1), where the other threads of this process keep waiting
    /// behind the calling thread. errc::not_held when the calling thread does
    /// not hold it; errc::invalid_argument, nothing sent, at an inner level
    /// (hold_count() above 1: the levels above would outlive the hold); the
    /// loss's reason (as on_lost() got it, errc::node_deleted while it is
    /// still on its way), nothing sent, when the hold was lost. On failure
    /// the thread no longer holds it (hold_count() 0).
    /// Errors: thrown as zklock::error, or in `ec`.
    ///@{
    void requeue();
    void requeue(std::error_code& ec);
    ///@}
    /// How many times the calling thread holds it (0 if it does not).
    std::size_t hold_count() const;
    /// As Mutex::on_event, for the lock itself: granted once at the first
    /// level, released once at the last (the inner levels make no event).
    void on_event(std::function<void(const lock_event&)> callback) { mutex_.on_event(std::move(callback)); }
    /// True while held (by any thread of this object).
    bool is_held() const noexcept { return mutex_.is_held(); }
    /// The fencing token of the hold (0 when not held).
    std::int64_t fencing_token() const noexcept { return mutex_.fencing_token(); }
    /// Called with the reason every time the hold is lost.
    void on_lost(std::function<void(std::error_code)> callback) { mutex_.on_lost(std::move(callback)); }
    /// The lock node's full path while held; empty otherwise.
    std::string node_path() const { return mutex_.node_path(); }

private:
    void keep_loss_reason();
    bool try_lock_within(std::optional<std::chrono::steady_clock::time_point> deadline);
    bool acquire(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec);
    bool acquire_or_throw(std::optional<std::chrono::steady_clock::time_point> deadline, const char* op);
    bool enter_local(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec);
    void leave_local();

    struct loss {
        std::mutex m;
        std::error_code reason;  // of the last loss
    };
    Mutex mutex_;
    std::shared_ptr<loss> loss_ = std::make_shared<loss>();  // shared with the on_lost callback
    mutable std::mutex local_;
    std::condition_variable free_;
    std::thread::id owner_;
    std::size_t count_ = 0;
};

} // namespace zklock
