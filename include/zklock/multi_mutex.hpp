// zklock::MultiMutex: several ZooKeeper locks taken as one, without deadlock.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/detail/limits.hpp>
#include <zklock/error.hpp>
#include <zklock/export.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/session.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zklock {

namespace detail {
class set_contender;
}

/// Options of a MultiMutex.
struct MultiMutexOptions {
    /// Data stored in each of the set's nodes, before the list of the set's
    /// lock paths (which `zklock status` shows). Default (empty):
    /// "<hostname>:<pid>". Too large for one request: errc::invalid_argument.
    std::string node_data;
    /// ACL of the nodes, lock directories and container parents this lock
    /// creates. Default (none): the session's policy, SessionOptions::acl.
    std::optional<acl_list> acl;
    /// Lock-delay, as MutexOptions::lock_delay, in every queue of the set: the
    /// set waits this long before it holds when any of its queues was handed
    /// over by a loss.
    std::chrono::milliseconds lock_delay{0};
};

/// Several fair ZooKeeper locks taken as one: all of them or none.
///
/// One `multi` transaction creates an EPHEMERAL_SEQUENTIAL node
/// `_c_<guid>-lock-<seq>` (one guid for the set) under every lock path, and the
/// set is held when its node is first in every queue. A waiter watches its
/// predecessor in each queue where it is not first. Because the transaction
/// gives every node of the set one place in the servers' single commit order,
/// every queue orders any two sets the same way, so no two MultiMutex clients
/// can each wait for the other: no deadlock, whatever order the caller lists
/// the paths in, and grants are FIFO across the locks (docs/design.md has the
/// argument). An uncontended acquire costs two round trips (the transaction
/// with the listings behind it, then the read of its zxid: a create inside a
/// transaction returns no Stat).
///
/// Each node is an ordinary mutex node, so a MultiMutex queues fairly with
/// plain Mutex (a set of one), SharedMutex (it counts as a writer) and the
/// peers' locks on the same paths, which wait for it as for any node ahead.
/// The no-deadlock argument covers the clients that take all their locks in one
/// acquire; a client that holds a lock and then waits for another outside a
/// MultiMutex can still form a cycle with it.
///
/// Guarantees (as Mutex's, for the whole set):
/// - A cancelled, timed-out or failed acquire leaves no node in any directory;
///   connection loss while the transaction is in flight is recovered by the
///   guid in every directory (the transaction committed everywhere or nowhere).
/// - Release and cancellation delete every node with one transaction.
/// - Losing any node of the set loses the set (on_lost, async_wait_lost,
///   is_held() false), and the set's other nodes are deleted.
///
/// Input: the paths are validated before any server call; an empty set, a
/// path given twice and a path under another path of the set (nested) are
/// errc::invalid_path.
///
/// Thread-safety, blocking members, Lockable / TimedLockable: as Mutex.
class ZKLOCK_EXPORT MultiMutex {
public:
    /// Throws zklock::error (errc::invalid_path, errc::invalid_argument) on bad input.
    MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options = {});
    /// Same, reporting bad input in `ec` (every acquire then fails with it).
    MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options, std::error_code& ec);
    MultiMutex(const MultiMutex&) = delete;
    MultiMutex& operator=(const MultiMutex&) = delete;
    /// Releases the set if held and cancels a pending acquire.
    ~MultiMutex();

    void lock();
    void lock(std::error_code& ec);
    /// Acquires only if every lock is free right now. Needs a connected session.
    bool try_lock();
    bool try_lock(std::error_code& ec);
    template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout) {
        std::error_code ec;
        const bool ok = try_lock_within(detail::deadline_after(timeout), ec);
        throw_if(ec, "zklock::MultiMutex::try_lock_for");
        return ok;
    }
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& timeout, std::error_code& ec) {
        return try_lock_within(detail::deadline_after(timeout), ec);
    }
    template <class Clock, class Duration> bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
        std::error_code ec;
        const bool ok = try_lock_within(detail::deadline_at(t), ec);
        throw_if(ec, "zklock::MultiMutex::try_lock_until");
        return ok;
    }
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t, std::error_code& ec) {
        return try_lock_within(detail::deadline_at(t), ec);
    }
    /// Releases every lock of the set; never throws. Does nothing when not held.
    void unlock() noexcept;

    /// Signature: void(std::error_code). Cancellation (terminal, partial,
    /// total): every node goes, the handler gets std::errc::operation_canceled.
    template <class CompletionToken> auto async_lock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_lock_impl(std::move(handler)); }, token);
    }
    /// Signature: void(std::error_code, bool acquired). Cancellation as async_lock.
    template <class CompletionToken> auto async_try_lock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, bool)>(
            [this](auto handler) { async_try_lock_impl(std::nullopt, true, std::move(handler)); }, token);
    }
    /// Signature: void(std::error_code, bool acquired): false without an error
    /// when `timeout` passed. Cancellation as async_lock.
    template <class Rep, class Period, class CompletionToken>
    auto async_try_lock_for(const std::chrono::duration<Rep, Period>& timeout, CompletionToken&& token) {
        const auto deadline = detail::deadline_after(timeout);
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, bool)>(
            [this, deadline](auto handler) { async_try_lock_impl(deadline, false, std::move(handler)); }, token);
    }
    /// Signature: void(std::error_code): completes when the transaction that
    /// deletes every node has committed (errors as Mutex::async_unlock).
    template <class CompletionToken> auto async_unlock(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_unlock_impl(std::move(handler)); }, token);
    }
    /// Signature: void(std::error_code): the loss reason, {} after unlock(),
    /// errc::not_held when not held. Cancellation: terminal, partial, total.
    template <class CompletionToken> auto async_wait_lost(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_wait_lost_impl(std::move(handler)); }, token);
    }
    /// Called on the session's executor every time a hold of the set is lost.
    void on_lost(std::function<void(std::error_code)> callback);

    bool is_held() const noexcept;
    /// While held: the zxid of the transaction that created the set's nodes
    /// (the czxid of every one of them); 0 otherwise. Comparable with the
    /// tokens of every lock of the ensemble (Mutex::fencing_token()).
    std::int64_t fencing_token() const noexcept;
    /// The lock paths, in the order given.
    const std::vector<std::string>& paths() const noexcept { return paths_; }
    /// Per lock path, our node's full path while acquiring (once created) or held.
    std::vector<std::string> node_paths() const;
    /// Per lock path, our place in its queue as of its last listing (0 = first).
    std::vector<std::optional<std::size_t>> queue_positions() const;
    lock_stats stats() const;
    /// Why the last acquire failed, in words; empty when it did not.
    std::string failure_detail() const;

private:
    MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options, std::error_code* ec);
    bool try_lock_within(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec);
    void async_lock_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);
    void async_try_lock_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                             boost::asio::any_completion_handler<void(std::error_code, bool)> handler);
    void async_unlock_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);
    void async_wait_lost_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);

    std::vector<std::string> paths_;
    std::error_code config_error_;
    std::string config_reason_;
    std::shared_ptr<detail::set_contender> engine_;
};

} // namespace zklock
