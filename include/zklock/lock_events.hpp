// zklock::lock_event: what happens to one lock object, for metrics and
// tracing (Mutex::on_event), and lock_metrics, which counts them and renders
// the Prometheus text format.
#pragma once

#include <zklock/export.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>

namespace zklock {

enum class lock_event_kind {
    queued,   ///< the acquire's node is in the queue: `position` contenders ahead
    moved,    ///< a new listing put it at another `position`
    granted,  ///< held: `waited` since the acquire began, `fencing_token`
    released, ///< unlocked: `held` for that long
    lost,     ///< the hold ended without an unlock: `reason` (see is_lock_lost), `held`
    left,     ///< the acquire ended without a grant after it queued: `reason` (errc::timeout for
              ///< a deadline that passed or a try that found the lock busy, operation_canceled,
              ///< or the error the acquire failed with)
    revocation_requested, ///< held, a revocation request arrived (include/zklock/revocation.hpp):
                          ///< `reason` errc::revoked when the lock honours it (revocable: its handler
                          ///< runs, or it lets go and `lost` follows), empty when it keeps the lock
};

/// One event of one lock object.
struct lock_event {
    /// What happened.
    lock_event_kind kind = lock_event_kind::queued;
    std::string path;                   ///< the lock's path
    std::size_t position = 0;           ///< queued, moved
    std::chrono::nanoseconds waited{0}; ///< granted
    std::chrono::nanoseconds held{0};   ///< released, lost
    std::int64_t fencing_token = 0;     ///< granted
    std::error_code reason;             ///< lost, left, revocation_requested
    /// A SharedMutex's read side (its write side and every other lock: false).
    bool shared = false;
};

/// "queued", "moved", "granted", "released", "lost", "left", "revocation_requested".
ZKLOCK_EXPORT const char* to_string(lock_event_kind kind) noexcept;

/// Counts lock events per lock path and renders them in the Prometheus text
/// exposition format. Thread-safe: one object may take the events of every lock
/// of a process (each lock's on_event handler calls record(): every QueueLock
/// (a Mutex, a Semaphore's permit, a SharedMutex's side), RecursiveMutex,
/// SharedMutex, MultiMutex, LeaderElection).
class ZKLOCK_EXPORT lock_metrics {
public:
    /// Counts `e` under its path (thread-safe).
    void record(const lock_event& e);
    /// A handler for on_event (Mutex's and the others') that records into this object, which must
    /// outlive the Sessions of the locks it is given to (events are posted to
    /// their executors, the last one as a lock is destroyed).
    std::function<void(const lock_event&)> handler() {
        return [this](const lock_event& e) { record(e); };
    }
    /// Every metric, one family after another (text format 0.0.4):
    /// zklock_lock_acquisitions_total, zklock_lock_wait_seconds_total,
    /// zklock_lock_hold_seconds_total, zklock_lock_losses_total,
    /// zklock_lock_revocation_requests_total, and the gauges zklock_lock_waiting
    /// (acquires queued, not yet granted) and zklock_lock_held.
    std::string prometheus_text() const;

private:
    struct per_path {
        std::uint64_t acquisitions = 0, losses = 0, revocation_requests = 0;
        double wait_s = 0, hold_s = 0;
        std::int64_t waiting = 0, held = 0;
    };
    mutable std::mutex m_;
    std::map<std::string, per_path> paths_;
};

} // namespace zklock
