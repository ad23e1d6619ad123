// zklock::SharedMutex: a fair distributed read-write lock.
#pragma once

#include <zklock/export.hpp>
#include <zklock/mutex.hpp>

namespace zklock {

/// A fair read-write lock on a ZooKeeper path. Writers create `_c_<guid>-write-<seq>`,
/// readers `_c_<guid>-read-<seq>` (with MutexOptions::names, Curator's
/// `__WRIT__` / `__READ__` or kazoo's `__lock__` / `__rlock__`), in one queue:
/// - a writer holds the lock when it is first in the queue, and watches its
///   immediate predecessor;
/// - a reader holds it when no writer is ahead of it, and watches the nearest
///   writer ahead.
/// Readers that arrive after a queued writer wait for it, so writers do not starve,
/// and a writer's release wakes one waiter (the next writer, or each reader that
/// was waiting for exactly that writer).
///
/// Satisfies SharedTimedLockable and TimedLockable: std::shared_lock and
/// std::unique_lock work. One object can hold one exclusive and one shared place
/// at a time (through its two internal queue places); fencing tokens, loss,
/// cancellation and clean-up behave as for Mutex.
class ZKLOCK_EXPORT SharedMutex {
public:
    /// Throws zklock::error as Mutex's constructor does (errc::invalid_path for a bad path).
    SharedMutex(Session& session, std::string path, MutexOptions options = {});

    /// The exclusive (writer) hold: every form of Lock's (lock, try_lock,
    /// try_lock_for, try_lock_until, unlock and their async_ forms,
    /// async_wait_lost), with the same semantics and errors.
    ///@{
    void lock() { writer_.lock(); }
    void lock(std::error_code& ec) { writer_.lock(ec); }
    bool try_lock() { return writer_.try_lock(); }
    bool try_lock(std::error_code& ec) { return writer_.try_lock(ec); }
    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
        return writer_.try_lock_for(d);
    }
    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period>& d, std::error_code& ec) {
        return writer_.try_lock_for(d, ec);
    }
    template <class Clock, class Duration> bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        return writer_.try_lock_until(t);
    }
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t, std::error_code& ec) {
        return writer_.try_lock_until(t, ec);
    }
    void unlock() noexcept { writer_.unlock(); }
    template <class CompletionToken> auto async_lock(CompletionToken&& token) {
        return writer_.async_lock(std::forward<CompletionToken>(token));
    }
    template <class CompletionToken> auto async_try_lock(CompletionToken&& token) {
        return writer_.async_try_lock(std::forward<CompletionToken>(token));
    }
    template <class Rep, class Period, class CompletionToken>
    auto async_try_lock_for(const std::chrono::duration<Rep, Period>& d, CompletionToken&& token) {
        return writer_.async_try_lock_for(d, std::forward<CompletionToken>(token));
    }
    template <class CompletionToken> auto async_unlock(CompletionToken&& token) {
        return writer_.async_unlock(std::forward<CompletionToken>(token));
    }
    template <class CompletionToken> auto async_wait_lost(CompletionToken&& token) {
        return writer_.async_wait_lost(std::forward<CompletionToken>(token));
    }
    ///@}

    /// The shared (reader) hold: the same forms, named with `shared`, with
    /// the same semantics and errors (std::shared_lock uses them).
    ///@{
    void lock_shared() { reader_.lock(); }
    void lock_shared(std::error_code& ec) { reader_.lock(ec); }
    bool try_lock_shared() { return reader_.try_lock(); }
    bool try_lock_shared(std::error_code& ec) { return reader_.try_lock(ec); }
    template <class Rep, class Period> bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& d) {
        return reader_.try_lock_for(d);
    }
    template <class Rep, class Period>
    bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& d, std::error_code& ec) {
        return reader_.try_lock_for(d, ec);
    }
    template <class Clock, class Duration>
    bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& t) {
        return reader_.try_lock_until(t);
    }
    template <class Clock, class Duration>
    bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& t, std::error_code& ec) {
        return reader_.try_lock_until(t, ec);
    }
    void unlock_shared() noexcept { reader_.unlock(); }
    template <class CompletionToken> auto async_lock_shared(CompletionToken&& token) {
        return reader_.async_lock(std::forward<CompletionToken>(token));
    }
    template <class CompletionToken> auto async_try_lock_shared(CompletionToken&& token) {
        return reader_.async_try_lock(std::forward<CompletionToken>(token));
    }
    template <class Rep, class Period, class CompletionToken>
    auto async_try_lock_shared_for(const std::chrono::duration<Rep, Period>& d, CompletionToken&& token) {
        return reader_.async_try_lock_for(d, std::forward<CompletionToken>(token));
    }
    template <class CompletionToken> auto async_unlock_shared(CompletionToken&& token) {
        return reader_.async_unlock(std::forward<CompletionToken>(token));
    }
    template <class CompletionToken> auto async_wait_lost_shared(CompletionToken&& token) {
        return reader_.async_wait_lost(std::forward<CompletionToken>(token));
    }
    ///@}

    /// True while the exclusive (the shared) side holds.
    ///@{
    bool is_held() const noexcept { return writer_.is_held(); }
    bool is_held_shared() const noexcept { return reader_.is_held(); }
    ///@}
    /// The fencing token of the exclusive hold (0 when not held).
    std::int64_t fencing_token() const noexcept { return writer_.fencing_token(); }
    /// The fencing token of the shared hold (0 when not held).
    std::int64_t shared_fencing_token() const noexcept { return reader_.fencing_token(); }
    /// The full path of the node of the exclusive (the shared) side; empty when
    /// that side holds nothing and waits for nothing.
    ///@{
    std::string node_path() const { return writer_.node_path(); }
    std::string node_path_shared() const { return reader_.node_path(); }
    ///@}
    /// Why the last acquire of the exclusive (the shared) side failed, in words
    /// (as Mutex::failure_detail()); empty when there is nothing to add to the code.
    ///@{
    std::string failure_detail() const { return writer_.failure_detail(); }
    std::string failure_detail_shared() const { return reader_.failure_detail(); }
    ///@}
    /// Called with the reason when either hold is lost.
    void on_lost(std::function<void(std::error_code)> callback);
    /// Our place in the queue as of the last listing (0 = first), of the
    /// exclusive and of the shared side; none when that side does not queue.
    ///@{
    std::optional<std::size_t> queue_position() const noexcept { return writer_.queue_position(); }
    std::optional<std::size_t> queue_position_shared() const noexcept { return reader_.queue_position(); }
    ///@}
    /// Calls `callback(position)` on the session's executor whenever the place
    /// of the exclusive (or the shared) side in the queue changes.
    ///@{
    void on_queue_position(std::function<void(std::size_t)> callback) { writer_.on_queue_position(std::move(callback)); }
    void on_queue_position_shared(std::function<void(std::size_t)> callback) {
        reader_.on_queue_position(std::move(callback));
    }
    ///@}
    /// Calls `callback(event)` on the session's executor for each event of
    /// either side, as Mutex::on_event; the shared side's carry
    /// `lock_event::shared`. Register before acquiring.
    void on_event(std::function<void(const lock_event&)> callback);
    /// Counters of each side (as Mutex::stats()).
    ///@{
    lock_stats stats() const { return writer_.stats(); }
    lock_stats stats_shared() const { return reader_.stats(); }
    ///@}
    /// The queue as the server has it now (blocking); `contender::shared` marks readers.
    std::vector<contender> contenders() const { return writer_.contenders(); }

private:
    Mutex writer_;
    Mutex reader_;
};

} // namespace zklock
