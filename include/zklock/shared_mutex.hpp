// zklock::SharedMutex: a fair distributed read-write lock.
#pragma once

#include <zklock/export.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/mutex.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/session.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock {

/// A fair read-write lock on a ZooKeeper path, with its two sides as Locks (as
/// Curator's InterProcessReadWriteLock has readLock() and writeLock()):
/// writer() creates `_c_<guid>-write-<seq>` nodes, reader() `_c_<guid>-read-<seq>`
/// (with MutexOptions::names, Curator's `__WRIT__` / `__READ__` or kazoo's
/// `__lock__` / `__rlock__`), in one queue:
/// - the writer holds when its node is first in the queue, and watches its
///   immediate predecessor;
/// - the reader holds when no writer is ahead of it, and watches the nearest
///   writer ahead.
/// Readers that arrive after a queued writer wait for it, so writers do not starve,
/// and a writer's release wakes one waiter (the next writer, or each reader that
/// was waiting for exactly that writer).
///
/// Each side is a QueueLock (queue_lock.hpp): every form of Lock (the error_code
/// and async_ forms, async_wait_lost, fencing_token, stats, failure_detail) and
/// the queue's extras (node_path, queue_position, on_queue_position, on_event)
/// are the side's own. One object can hold one exclusive and one shared place at
/// a time; a second place of either kind is another SharedMutex on the same path.
///
/// Satisfies SharedTimedLockable and TimedLockable (the members below forward
/// to the sides): std::shared_lock and std::unique_lock work.
class ZKLOCK_EXPORT SharedMutex {
public:
    /// Throws zklock::error as Mutex's constructor does (errc::invalid_path for a bad path).
    SharedMutex(Session& session, std::string path, MutexOptions options = {});
    /// Same, reporting bad input in `ec` (every acquire of either side then
    /// fails with that error).
    SharedMutex(Session& session, std::string path, MutexOptions options, std::error_code& ec);
    /// Moves both sides (held or not); the moved-from object may only be
    /// destroyed or assigned to.
    SharedMutex(SharedMutex&&) noexcept = default;
    /// Releases what this object holds or waits for, then takes `other`'s.
    SharedMutex& operator=(SharedMutex&&) noexcept = default;

    /// The exclusive side.
    ///@{
    QueueLock& writer() noexcept { return writer_; }
    const QueueLock& writer() const noexcept { return writer_; }
    ///@}
    /// The shared side.
    ///@{
    QueueLock& reader() noexcept { return reader_; }
    const QueueLock& reader() const noexcept { return reader_; }
    ///@}

    /// TimedLockable: the writer's lock(), try_lock(), try_lock_for(),
    /// try_lock_until() and unlock() (std::unique_lock uses them).
    ///@{
    void lock() { writer_.lock(); }
    bool try_lock() { return writer_.try_lock(); }
    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
        return writer_.try_lock_for(d);
    }
    template <class Clock, class Duration> bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        return writer_.try_lock_until(t);
    }
    void unlock() noexcept { writer_.unlock(); }
    ///@}

    /// SharedTimedLockable: the reader's lock(), try_lock(), try_lock_for(),
    /// try_lock_until() and unlock() (std::shared_lock uses them).
    ///@{
    void lock_shared() { reader_.lock(); }
    bool try_lock_shared() { return reader_.try_lock(); }
    template <class Rep, class Period> bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& d) {
        return reader_.try_lock_for(d);
    }
    template <class Clock, class Duration>
    bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& t) {
        return reader_.try_lock_until(t);
    }
    void unlock_shared() noexcept { reader_.unlock(); }
    ///@}

    /// The lock's path.
    const std::string& path() const noexcept { return writer_.path(); }
    /// Calls `callback(event)` on the session's executor for each event of
    /// either side, as QueueLock::on_event; the reader's carry
    /// `lock_event::shared`. Register before acquiring.
    void on_event(std::function<void(const lock_event&)> callback);
    /// The queue as the server has it now (blocking); `contender::shared` marks
    /// readers. Errors: thrown as zklock::error, or in `ec`.
    ///@{
    std::vector<contender> contenders() const { return writer_.contenders(); }
    std::vector<contender> contenders(std::error_code& ec) const { return writer_.contenders(ec); }
    ///@}

private:
    SharedMutex(Session& session, std::string path, MutexOptions options, std::error_code* ec);

    QueueLock writer_;
    QueueLock reader_;
};

} // namespace zklock
