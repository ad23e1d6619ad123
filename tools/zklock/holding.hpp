// What `zklock run` and `zklock lock` hold: the lock (a Mutex), a shared hold
// of a read-write lock (a SharedMutex's reader), several locks as one (a
// MultiMutex) or one permit of a semaphore (Semaphore::permit()): each a
// zklock::Lock, driven on the runner's io_context.
#pragma once

#include <zklock/lock_events.hpp>
#include <zklock/node_names.hpp>
#include <zklock/session.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::cli {

/// Every completion runs on the runner's io_context.
class holding {
public:
    using acquire_handler = std::function<void(std::error_code, bool acquired)>;
    using done_handler = std::function<void(std::error_code)>;
    virtual ~holding() = default;
    /// -n: only if free now; -w: within `wait` (then acquired=false without error);
    /// otherwise until granted.
    virtual void acquire(bool no_wait, std::optional<std::chrono::milliseconds> wait, acquire_handler done) = 0;
    /// Cancels a pending acquire: it completes with operation_canceled, no node left.
    virtual void cancel() = 0;
    virtual std::string node_path() const = 0;
    virtual std::int64_t fencing_token() const = 0;
    /// As Lock::safe_for(): how much longer the hold is certainly safe.
    virtual std::optional<std::chrono::milliseconds> safe_for() const = 0;
    /// As Lock::is_held(): false once the hold is over, also before its loss's reason is known.
    virtual bool is_held() const = 0;
    /// As Mutex::async_wait_lost.
    virtual void wait_lost(done_handler done) = 0;
    /// Releases; errc::not_held when it was lost first.
    virtual void release(done_handler done) = 0;
    /// Hands the lock on and queues again in one transaction (QueueLock::
    /// requeue), then completes as acquire() does (-n, -w as there; cancel()
    /// stops the wait). False, and nothing done, when this hold has no
    /// requeue (a lock set).
    virtual bool requeue(bool no_wait, std::optional<std::chrono::milliseconds> wait, acquire_handler done) = 0;
    /// Why -n did not get it.
    virtual std::string busy_message() const = 0;
    /// Why the last acquire failed, in words (Mutex::failure_detail()).
    virtual std::string failure_detail() const = 0;
    /// `callback` for every lock event (as QueueLock::on_event), run on the
    /// runner's io_context. Before acquire().
    virtual void on_event(std::function<void(const lock_event&)> callback) = 0;
};

/// What to hold at the lock paths.
struct holding_kind {
    std::optional<std::size_t> permits;  ///< one of that many permits of a semaphore (one path, zklock's names only)
    bool shared = false;                 ///< a reader of the read-write lock (one path, not with permits)
    node_names names = node_names::zklock;  ///< one path: the naming of the node
    std::string node_data;               ///< stored in the node(s); empty: "<host>:<pid>"
    std::chrono::milliseconds lock_delay{0};  ///< as MutexOptions::lock_delay
    bool revocable = false;              ///< as MutexOptions::revocable: let go when asked (a loss, errc::revoked)
};

/// The lock at the one path (exclusive, or shared), or a permit of the
/// semaphore there; several paths: the lock set (zklock's names), whose
/// node_path() is its nodes, a line each.
std::unique_ptr<holding> make_holding(boost::asio::io_context& io, Session& session,
                                      const std::vector<std::string>& paths, const holding_kind& kind);

} // namespace zklock::cli
