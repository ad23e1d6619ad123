// zklock::Lock: one lock interface over every backend (ZooKeeper, Redis,
// Redlock, PostgreSQL, flock), and LockService, which makes locks by name.
#pragma once

#include <zklock/detail/limits.hpp>
#include <zklock/error.hpp>
#include <zklock/export.hpp>
#include <zklock/lock_stats.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_signal.hpp>

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

ZKLOCK_EXPORT const char* to_string(dead_holder_release r) noexcept;

/// What a backend guarantees, so users and tests can tell them apart.
struct lock_capabilities {
    std::string_view backend;                  ///< its name: "zookeeper", "redis", ...
    bool fair_fifo = false;                    ///< grants follow arrival order
    dead_holder_release dead_holder = dead_holder_release::session_end;
    bool fencing_monotonic_across_failover = false;  ///< tokens keep increasing when a server fails over or restarts
    bool server_wakes_waiters = false;         ///< the server pushes wake-ups (no polling or retry loop)
    bool wakes_one_waiter = false;             ///< a release wakes exactly one waiter (no herd)
    bool reports_loss = true;                  ///< the holder is told when its lock is lost
    std::string_view limits;                   ///< what it does not guarantee, in one sentence
};


namespace detail {

/// What a backend implements: one contender for one lock. Callbacks run on the
/// backend's own thread or strand; Lock turns them into user completions.
class ZKLOCK_EXPORT lock_backend {
public:
    using acquire_callback = std::function<void(std::error_code, bool acquired)>;
    virtual ~lock_backend() = default;

    /// Acquire; (error, acquired). acquired is false without an error when the
    /// deadline passed or, with no_wait, when the lock is taken. Signalling `slot`
    /// cancels (std::errc::operation_canceled); nothing may be left behind.
    virtual void acquire(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                         boost::asio::cancellation_slot slot, acquire_callback callback) = 0;
    /// errc::not_held when not held; otherwise releases, `done` (optional) gets the outcome.
    virtual std::error_code release(std::function<void(std::error_code)> done) = 0;
    /// Releases or abandons whatever it holds or waits for (destructors).
    virtual void shutdown() noexcept = 0;
    virtual bool held() const noexcept = 0;
    virtual std::int64_t fencing_token() const noexcept = 0;
    virtual void on_lost(std::function<void(std::error_code)> callback) = 0;
    /// Once: the loss reason, {} when released first, errc::not_held when not held,
    /// operation_canceled when `slot` is signalled.
    virtual void wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) = 0;
    /// True on a thread where blocking for this backend would deadlock.
    virtual bool on_backend_thread() const noexcept = 0;
    /// Where user completions go when the handler names no executor.
    virtual boost::asio::any_io_executor executor() const = 0;
    virtual lock_capabilities capabilities() const noexcept = 0;
    /// Callable from any thread.
    virtual lock_stats stats() const noexcept = 0;
};

} // namespace detail

/// A lock on any backend, with the interface of zklock::Mutex: Lockable and
/// TimedLockable (std::unique_lock works), error_code overloads, Asio completion
/// tokens with per-operation cancellation, fencing tokens and loss reports.
/// Made by a LockService (see open_lock_service()).
///
/// Thread-safety: members may be called from any thread. Blocking members fail
/// with errc::would_deadlock on the backend's own I/O thread.
class ZKLOCK_EXPORT Lock {
public:
    explicit Lock(std::shared_ptr<detail::lock_backend> backend);
    Lock(Lock&&) noexcept = default;
    Lock& operator=(Lock&&) noexcept;
    /// Releases if held, cancels a pending acquire.
    ~Lock();

    void lock();
    void lock(std::error_code& ec);
    bool try_lock();
    bool try_lock(std::error_code& ec);
    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
        std::error_code ec;
        const bool ok = try_lock_for(timeout, ec);
        throw_if(ec, "zklock::Lock::try_lock_for");
        return ok;
    }
    /// As std::timed_mutex: zero or less tries once; hours::max() waits without a deadline.
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout, std::error_code& ec) {
        return acquire_blocking(detail::deadline_after(timeout), false, ec);
    }
    template <class Clock, class Duration> bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        std::error_code ec;
        const bool ok = acquire_blocking(detail::deadline_at(t), false, ec);
        throw_if(ec, "zklock::Lock::try_lock_until");
        return ok;
    }
    /// Never throws; does nothing when not held.
    void unlock() noexcept;

    /// void(std::error_code). Cancellation: terminal, partial, total.
    template <class CompletionToken> auto async_lock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_lock_impl(std::move(handler)); }, token);
    }
    /// void(std::error_code, bool acquired): acquired is false, without an error, when
    /// `timeout` passed. Cancellation: terminal, partial, total.
    template <class Rep, class Period, class CompletionToken>
    auto async_try_lock_for(const std::chrono::duration<Rep, Period>& timeout, CompletionToken&& token) {
        const auto deadline = detail::deadline_after(timeout);
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, bool)>(
            [this, deadline](auto handler) { async_try_lock_impl(deadline, false, std::move(handler)); }, token);
    }
    /// void(std::error_code, bool acquired): only if free now.
    template <class CompletionToken> auto async_try_lock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, bool)>(
            [this](auto handler) { async_try_lock_impl(std::nullopt, true, std::move(handler)); }, token);
    }
    /// void(std::error_code): completes when the release is confirmed.
    template <class CompletionToken> auto async_unlock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_unlock_impl(std::move(handler)); }, token);
    }
    /// void(std::error_code): the loss reason; {} when unlocked first;
    /// errc::not_held when not held at the call. Each call waits on its own:
    /// cancelling one (terminal, partial, total) completes only that one, with
    /// std::errc::operation_canceled.
    template <class CompletionToken> auto async_wait_lost(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_wait_lost_impl(std::move(handler)); }, token);
    }
    /// Adds `callback` to the ones called, posted to the backend's executor,
    /// every time a hold is lost (is_held() already false there); every
    /// callback added is called. Never called after the Lock is destroyed.
    void on_lost(std::function<void(std::error_code)> callback);

    bool is_held() const noexcept;
    /// A token that increases with every grant of this lock (see capabilities()
    /// for whether it survives server failover).
    std::int64_t fencing_token() const noexcept;
    lock_capabilities capabilities() const noexcept;
    /// What this lock has done so far: grants, requests, wake-ups, polling
    /// retries, time waited and held (lock_stats).
    lock_stats stats() const noexcept;

private:
    bool acquire_blocking(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                          std::error_code& ec);
    void async_lock_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);
    void async_try_lock_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                             boost::asio::any_completion_handler<void(std::error_code, bool)> handler);
    void async_unlock_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);
    void async_wait_lost_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);

    std::shared_ptr<detail::lock_backend> backend_;
};

/// A connection to one lock service that makes locks by name.
class ZKLOCK_EXPORT LockService {
public:
    virtual ~LockService() = default;
    /// A lock named `name`: 1-200 characters from [A-Za-z0-9._-]. Other names
    /// fail with errc::invalid_path (zklock::error) before any server call.
    virtual Lock make_lock(const std::string& name) = 0;
    virtual lock_capabilities capabilities() const noexcept = 0;
};

/// Checks a backend-neutral lock name: errc::invalid_path with a reason, or {}.
ZKLOCK_EXPORT std::error_code validate_lock_name(std::string_view name, std::string* reason = nullptr);

} // namespace zklock
