// zklock::LockBackend: what a lock backend implements, so that zklock::Lock
// (its blocking, error_code and asynchronous forms, std::unique_lock, the
// conformance suite's expectations) works on it. Every backend zklock ships
// is one; a backend of your own is one class:
//
//     class MyBackend : public zklock::LockBackend { ... };
//     zklock::Lock lock(std::make_shared<MyBackend>(...));
//
// and a LockService (lock.hpp) that makes its Locks by name.
#pragma once

#include <zklock/export.hpp>
#include <zklock/lock.hpp>
#include <zklock/lock_stats.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <system_error>

namespace zklock {

/// One contender for one lock, as a backend runs it. Lock calls these members
/// from any thread; the backend completes them through the callbacks, on a
/// thread or strand of its own (Lock turns each callback into a completion on
/// the user's executor, never inline). Contract, as the conformance suite
/// (tests/integration/conformance) checks it for every backend:
/// - one acquire at a time per object: a second one while the first waits or
///   holds completes with errc::already_acquiring;
/// - a cancelled, timed-out or failed acquire leaves nothing behind on the server;
/// - every callback is called exactly once, also when the object is shut down.
class ZKLOCK_EXPORT LockBackend {
public:
    /// What acquire() completes: (error, acquired).
    using acquire_callback = std::function<void(std::error_code, bool acquired)>;
    virtual ~LockBackend() = default;

    /// Acquires; calls `callback(error, acquired)`. acquired is false without
    /// an error when `deadline` passed or, with `no_wait`, when the lock is
    /// taken (no deadline: wait until granted). Signalling `slot` cancels
    /// (std::errc::operation_canceled); nothing may be left behind.
    virtual void acquire(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                         boost::asio::cancellation_slot slot, acquire_callback callback) = 0;
    /// errc::not_held when not held; otherwise starts the release and returns
    /// {}: `done` (may be empty) gets its outcome (errc::timeout when the
    /// server did not confirm it, the loss reason when the hold was lost first).
    virtual std::error_code release(std::function<void(std::error_code)> done) = 0;
    /// Releases or abandons whatever it holds or waits for (Lock's destructor);
    /// pending callbacks still complete. Never throws.
    virtual void shutdown() noexcept = 0;
    /// True while this contender holds the lock.
    virtual bool held() const noexcept = 0;
    /// The current hold's fencing token; 0 when not held.
    virtual std::int64_t fencing_token() const noexcept = 0;
    /// Until when (steady clock) the current hold is certainly safe: no other
    /// contender can be granted before (Lock::safe_for()). A time not after
    /// now (the epoch will do) when not held; none (the default) when the
    /// backend cannot bound it. Callable from any thread.
    virtual std::optional<std::chrono::steady_clock::time_point> safe_until() const noexcept { return std::nullopt; }
    /// Adds a callback called with the reason every time a hold is lost.
    virtual void on_lost(std::function<void(std::error_code)> callback) = 0;
    /// Calls `callback` once: with the loss reason, {} when the hold is released
    /// first, errc::not_held at once when nothing is held, operation_canceled
    /// when `slot` is signalled.
    virtual void wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) = 0;
    /// True on a thread where blocking for this backend would deadlock (its
    /// own): the blocking forms then fail with errc::would_deadlock.
    virtual bool on_backend_thread() const noexcept = 0;
    /// Where user completions go when the handler names no executor.
    virtual boost::asio::any_io_executor executor() const = 0;
    /// What the backend guarantees (lock.hpp).
    virtual lock_capabilities capabilities() const noexcept = 0;
    /// What this contender has done so far. Callable from any thread.
    virtual lock_stats stats() const noexcept = 0;
    /// Why the last acquire failed, in words; empty when it did not (or the
    /// backend has nothing to add to the error code). Never a secret. Callable
    /// from any thread.
    virtual std::string failure_detail() const { return {}; }
};

} // namespace zklock
