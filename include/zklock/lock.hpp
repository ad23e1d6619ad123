// zklock::Lock: one lock interface over every backend (ZooKeeper, Redis,
// Redlock, PostgreSQL, flock), and LockService, which makes locks by name.
#pragma once

#include <zklock/detail/deadline.hpp>
#include <zklock/error.hpp>
#include <zklock/export.hpp>
#include <zklock/lock_stats.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace zklock {

/// How a backend frees the lock of a holder that died without releasing it.
enum class dead_holder_release {
    session_end,     ///< when the holder's session expires (ZooKeeper)
    ttl_expiry,      ///< when the lease's time-to-live runs out (Redis, PostgreSQL lease)
    connection_end,  ///< when the holder's connection closes (PostgreSQL advisory and row locks)
    process_exit,    ///< when the holder's process exits (flock)
};

/// The release in words: "session end", "TTL expiry", ...
ZKLOCK_EXPORT const char* to_string(dead_holder_release r) noexcept;

/// What a backend guarantees, so users and tests can tell them apart.
struct lock_capabilities {
    std::string_view backend;                  ///< its name: "zookeeper", "redis", ...
    bool fair_fifo = false;                    ///< grants follow arrival order
    dead_holder_release dead_holder = dead_holder_release::session_end;  ///< what frees a lock whose holder died
    bool fencing_monotonic_across_failover = false;  ///< tokens keep increasing when a server fails over or restarts
    bool server_wakes_waiters = false;         ///< the server pushes wake-ups (no polling or retry loop)
    bool wakes_one_waiter = false;             ///< a release wakes exactly one waiter (no herd)
    bool reports_loss = true;                  ///< the holder is told when its lock is lost
    std::string_view limits;                   ///< what it does not guarantee, in one sentence
    bool fencing_tokens = true;                ///< fencing_token() gives a token while held (false: always 0, memcached)
};


class LockBackend;

/// A lock on any backend: Lockable and TimedLockable (std::unique_lock,
/// std::scoped_lock and std::lock_guard work), error_code overloads, Asio
/// completion tokens with per-operation cancellation, fencing tokens and loss
/// reports. Made by a LockService (see open_lock_service()); zklock::Mutex and
/// zklock::MultiMutex are Locks with ZooKeeper's extras.
///
/// A Lock object is one contender: it holds or waits for the lock at most once
/// at a time. Acquiring again while it holds or waits fails with
/// errc::already_acquiring (blocking forms throw zklock::error with that code,
/// which compares equal to std::errc::resource_deadlock_would_occur, as
/// std::mutex reports a second lock).
///
/// Thread-safety: members may be called from any thread. Blocking members need
/// the backend's executor to be run by another thread; called on that thread
/// they fail with errc::would_deadlock.
class ZKLOCK_EXPORT Lock {
public:
    /// A lock on `backend`: how a LockService (and a backend of your own,
    /// zklock/backend.hpp) makes them. Mutex, MultiMutex, Semaphore::permit()
    /// and SharedMutex's sides are Locks too.
    explicit Lock(std::shared_ptr<LockBackend> backend);
    /// Moves the lock (held or not); the moved-from object may only be
    /// destroyed or assigned to. Assigning releases what the target held.
    ///@{
    Lock(Lock&&) noexcept = default;
    Lock& operator=(Lock&&) noexcept;
    ///@}
    /// Releases if held, cancels a pending acquire.
    ~Lock();

    /// Blocks until acquired. On failure the first form throws zklock::error,
    /// with failure_detail() in its message; the second sets `ec`.
    ///@{
    void lock();
    void lock(std::error_code& ec);
    ///@}
    /// Acquires only if the lock is free right now. On ZooKeeper this needs a
    /// connected session (otherwise errc::connection_loss). Errors: thrown, or in `ec`.
    ///@{
    bool try_lock();
    bool try_lock(std::error_code& ec);
    ///@}
    /// Waits at most `timeout` (or until `t`); false when it passed (nothing
    /// is left behind). As std::timed_mutex: a timeout of zero or less tries
    /// once, like try_lock(); one too long for the clock (hours::max()) waits
    /// without a deadline. Errors: thrown, or in `ec`.
    ///@{
    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
        std::error_code ec;
        const bool ok = try_lock_for(timeout, ec);
        throw_failure(ec, "try_lock_for");
        return ok;
    }
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout, std::error_code& ec) {
        return acquire_blocking(detail::deadline_after(timeout), false, ec);
    }
    template <class Clock, class Duration> bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        std::error_code ec;
        const bool ok = try_lock_until(t, ec);
        throw_failure(ec, "try_lock_until");
        return ok;
    }
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t, std::error_code& ec) {
        return acquire_blocking(detail::deadline_at(t), false, ec);
    }
    ///@}
    /// Releases the lock; never throws. Does nothing when not held.
    void unlock() noexcept;

    /// Acquires asynchronously. Signature: void(std::error_code).
    /// Cancellation (terminal, partial, total): the acquire stops, nothing is
    /// left behind, and the handler gets std::errc::operation_canceled.
    template <class CompletionToken> auto async_lock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_lock_impl(std::move(handler)); }, token);
    }
    /// Like async_lock with a deadline. Signature: void(std::error_code, bool acquired);
    /// acquired is false, without an error, when `timeout` passed. Cancellation as async_lock.
    template <class Rep, class Period, class CompletionToken>
    auto async_try_lock_for(const std::chrono::duration<Rep, Period>& timeout, CompletionToken&& token) {
        const auto deadline = detail::deadline_after(timeout);
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, bool)>(
            [this, deadline](auto handler) { async_try_lock_impl(deadline, false, std::move(handler)); }, token);
    }
    /// Acquires only if the lock is free right now. Signature:
    /// void(std::error_code, bool acquired). Cancellation as async_lock.
    template <class CompletionToken> auto async_try_lock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, bool)>(
            [this](auto handler) { async_try_lock_impl(std::nullopt, true, std::move(handler)); }, token);
    }
    /// Releases and completes when the server confirmed it. Signature:
    /// void(std::error_code): errc::not_held when not held; on ZooKeeper,
    /// session_expired or session_closed when the session went first (the node
    /// is gone either way), errc::timeout when no server confirmed the delete
    /// within the session timeout (the session keeps the delete and retries it
    /// once a server answers; until then the server may still count this
    /// client as the holder).
    template <class CompletionToken> auto async_unlock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_unlock_impl(std::move(handler)); }, token);
    }
    /// Completes when the current hold ends. Signature: void(std::error_code):
    /// the loss reason (see is_lock_lost()), or an empty code when unlock() ends
    /// the hold first (a wait started while holding completes as unlock() is
    /// called). Started when nothing is held (before the grant, or after
    /// unlock()), it completes at once with errc::not_held. Each call waits on
    /// its own: cancelling one (terminal, partial, total) completes only that
    /// one, with std::errc::operation_canceled.
    template <class CompletionToken> auto async_wait_lost(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_wait_lost_impl(std::move(handler)); }, token);
    }
    /// Adds `callback` to the ones called, posted to the backend's executor,
    /// every time a hold is lost (not when it is unlocked; is_held() is
    /// already false there); every callback added is called. Register before
    /// acquiring. Never called after the Lock is destroyed.
    void on_lost(std::function<void(std::error_code)> callback);

    /// True while this object holds the lock; turns false at unlock() or loss.
    bool is_held() const noexcept;
    /// A token that increases with every grant of this lock while held, 0
    /// otherwise (see capabilities() for whether it survives server failover).
    /// A resource guarded by the lock should remember the highest token it has
    /// seen and refuse writes that carry a lower one (include/zklock/fencing.hpp).
    std::int64_t fencing_token() const noexcept;
    /// How much longer the current hold is certainly safe: no other contender
    /// can be granted the lock before then, even if this process is paused or
    /// cut off from the server right now. Zero when not held (or no longer
    /// certain: a holder that has heard nothing from the server for about a
    /// session timeout). On ZooKeeper it is measured on the monotonic clock
    /// from the send time of the newest request the server answered, against
    /// the negotiated session timeout, less 1% for a faster server clock
    /// (docs/design.md, "The safe-time budget"); the session sends a cheap
    /// request every third of the timeout while idle, so a healthy hold's
    /// budget stays between two thirds of the timeout and the whole. A hold
    /// someone deletes by hand (an operator) is not covered. None from the
    /// backends that do not bound it: flock and the SQL row and advisory locks
    /// (their hold ends with a connection the server may drop unseen), and in
    /// this version the lease backends too (Redis, Redlock, memcached, the
    /// lease and version tables).
    std::optional<std::chrono::milliseconds> safe_for() const noexcept;
    /// What the lock's backend guarantees (FIFO, what frees a dead holder's
    /// lock, whether tokens survive failover, ...).
    lock_capabilities capabilities() const noexcept;
    /// What this lock has done so far: grants, requests, wake-ups, polling
    /// retries, time waited and held (lock_stats).
    lock_stats stats() const noexcept;
    /// Why the last acquire failed, in words (on ZooKeeper: the path that
    /// refused it and the identity it was refused to, the ACL that is too open,
    /// the node that blocks the queue, the bad input). Empty when the last
    /// acquire did not fail. Never holds a secret.
    std::string failure_detail() const;

protected:
    /// `subject` names the lock in the messages of what the blocking forms throw.
    Lock(std::shared_ptr<LockBackend> backend, std::string subject);
    /// The name given at construction (a queue lock's path: kept once, not per class).
    const std::string& subject() const noexcept { return subject_; }

private:
    /// Throws zklock::error for `ec` (if set) from operation `op`, naming the
    /// subject and the failure detail.
    void throw_failure(const std::error_code& ec, const char* op) const;
    bool acquire_blocking(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                          std::error_code& ec);
    void async_lock_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);
    void async_try_lock_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                             boost::asio::any_completion_handler<void(std::error_code, bool)> handler);
    void async_unlock_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);
    void async_wait_lost_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);

    std::shared_ptr<LockBackend> backend_;
    std::string subject_;
};

/// A connection to one lock service that makes locks by name.
class ZKLOCK_EXPORT LockService {
public:
    virtual ~LockService() = default;
    /// A lock named `name`: 1-200 characters from [A-Za-z0-9._-]. Other names
    /// fail with errc::invalid_path (zklock::error) before any server call.
    virtual Lock make_lock(const std::string& name) = 0;
    /// What this service's locks guarantee (the same as their Lock::capabilities()).
    virtual lock_capabilities capabilities() const noexcept = 0;
};

/// Checks a backend-neutral lock name: errc::invalid_path with a reason, or {}.
ZKLOCK_EXPORT std::error_code validate_lock_name(std::string_view name, std::string* reason = nullptr);

} // namespace zklock
