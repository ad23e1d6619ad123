// zklock::Semaphore: at most K holders at once, granted in arrival order.
#pragma once

#include <zklock/export.hpp>
#include <zklock/lock.hpp>
#include <zklock/mutex.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace zklock {

/// Options of a Semaphore.
struct SemaphoreOptions {
    /// Data stored in each lease node. Default (empty): "<hostname>:<pid>".
    /// Too large for one request: errc::invalid_argument (see MutexOptions::node_data).
    std::string node_data;
    /// ACL of the lease nodes, the semaphore's directory and its container
    /// parents. Default (none): the session's policy, SessionOptions::acl.
    std::optional<acl_list> acl;
    /// Called on the session's executor with the waiter's place in line
    /// (0-based; below the permit count means granted) whenever it changes.
    std::function<void(std::size_t position)> on_position;
    /// Called on the session's executor for each event of each waiter this
    /// Semaphore makes (acquire, try_acquire_for, permit()), as
    /// Mutex::on_event: queued, moved, granted, released, lost, left. The
    /// events carry the semaphore's path; lock_metrics::handler() counts them.
    /// What it refers to must outlive the Session.
    std::function<void(const lock_event&)> on_event;
    /// Only node_names::zklock: no peer library's semaphore queues on lock nodes
    /// (docs/interop.md). Any other naming is refused at construction with
    /// errc::invalid_argument.
    node_names names = node_names::zklock;
    /// Lock-delay, as MutexOptions::lock_delay. With several holders a
    /// handover is judged conservatively: when more than one lease ended
    /// between two listings, the next grant waits.
    std::chrono::milliseconds lock_delay{0};
};

/// One granted permit of a Semaphore. Movable; releasing (or destroying) it
/// deletes its node and hands the permit to the next in line.
class Lease {
public:
    Lease() = default;
    /// Moves the permit; the moved-from Lease holds nothing.
    Lease(Lease&&) noexcept = default;
    /// Moves the permit; the permit the target held is released first.
    Lease& operator=(Lease&&) noexcept = default;  // releases the permit it held
    ~Lease() = default;  // releases (the Mutex inside does)

    /// True while the permit is held; false once released or lost.
    bool is_held() const noexcept { return mutex_ && mutex_->is_held(); }
    /// True while the permit is held.
    explicit operator bool() const noexcept { return is_held(); }
    /// czxid of the lease node (see Mutex::fencing_token()).
    std::int64_t fencing_token() const noexcept { return mutex_ ? mutex_->fencing_token() : 0; }
    /// The full path of the permit's node; empty once released.
    std::string node_path() const { return mutex_ ? mutex_->node_path() : std::string(); }
    /// Place in the queue as of the last listing (below the permit count).
    std::optional<std::size_t> queue_position() const noexcept {
        return mutex_ ? mutex_->queue_position() : std::nullopt;
    }
    /// Counters of the acquire that made this lease (watch notifications, listings).
    lock_stats stats() const { return mutex_ ? mutex_->stats() : lock_stats{}; }
    /// Releases the permit; never throws; does nothing when not held.
    void release() noexcept {
        if (mutex_) mutex_->unlock();
    }
    /// Releases the permit and completes when the delete has committed, as
    /// Mutex::async_unlock: void(std::error_code), errc::not_held when not held
    /// (also for a default-constructed or moved-from Lease, on the handler's
    /// associated executor), session_expired or session_closed when the session
    /// went first (the permit was lost before the release).
    template <class CompletionToken> auto async_release(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [m = mutex_.get()](auto handler) {
                if (m) return m->async_unlock(std::move(handler));
                complete_not_held(std::move(handler));
            },
            token);
    }
    /// Called with the reason when the permit is lost (as Mutex::on_lost).
    void on_lost(std::function<void(std::error_code)> callback) {
        if (mutex_) mutex_->on_lost(std::move(callback));
    }
    /// As Mutex::async_wait_lost; errc::not_held at once for a
    /// default-constructed or moved-from Lease (on the handler's associated executor).
    template <class CompletionToken> auto async_wait_lost(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [m = mutex_.get()](auto handler) {
                if (m) return m->async_wait_lost(std::move(handler));
                complete_not_held(std::move(handler));
            },
            token);
    }

private:
    friend class Semaphore;
    template <class Handler> static void complete_not_held(Handler handler) {
        auto ex = boost::asio::get_associated_executor(handler);
        boost::asio::post(ex, [h = std::move(handler)]() mutable { std::move(h)(make_error_code(errc::not_held)); });
    }
    explicit Lease(std::unique_ptr<Mutex> m) noexcept : mutex_(std::move(m)) {}
    std::unique_ptr<Mutex> mutex_;
};

/// A fair distributed counting semaphore: at most `permits` leases at once on
/// `path`, granted in arrival order. A waiter watches the `permits` nodes just
/// ahead of it (the deletion of any one of them can grant it a lease, whichever
/// holder releases first); when holders release in arrival order, each release
/// still wakes one waiter.
///
/// The permit count is stored as the data of the lock directory: a participant
/// that asks for a different count fails with errc::permits_mismatch instead of
/// over-admitting (the directory is a container: it disappears when the last
/// lease goes, and the next participant sets the count again). A path that holds
/// another library's semaphore (Curator's InterProcessSemaphoreV2, kazoo's
/// Semaphore) fails with errc::foreign_recipe: each would admit its own permits.
///
/// Loss, cancellation and clean-up behave as for Mutex. Thread-safety: members
/// may be called from any thread; each acquire is its own place in the queue.
class ZKLOCK_EXPORT Semaphore {
public:
    /// Throws zklock::error: errc::invalid_path, or errc::invalid_argument for 0
    /// permits, more than 2^31-1 permits, node data too large, an invalid ACL or
    /// SemaphoreOptions::names other than node_names::zklock.
    Semaphore(Session& session, std::string path, std::size_t permits, SemaphoreOptions options = {});

    /// Blocks until a permit is granted. Throws zklock::error on failure.
    Lease acquire();
    /// As above; errors in `ec` instead of thrown.
    Lease acquire(std::error_code& ec);
    /// A permit if one is free now; an empty optional otherwise (no node is
    /// left). Throws zklock::error on failure; the error_code form sets `ec`.
    std::optional<Lease> try_acquire();
    /// As above; errors in `ec` instead of thrown.
    std::optional<Lease> try_acquire(std::error_code& ec);
    /// A permit within `timeout`; an empty optional when it passed (no node is
    /// left). Zero or less tries once; hours::max() waits without a deadline.
    template <class Rep, class Period> std::optional<Lease> try_acquire_for(const std::chrono::duration<Rep, Period>& timeout) {
        std::error_code ec;
        auto lease = acquire_until(detail::deadline_after(timeout), ec);
        throw_if(ec, "zklock::Semaphore::try_acquire_for " + path_);
        return lease;
    }
    template <class Rep, class Period>
    /// As above; errors in `ec` instead of thrown.
    std::optional<Lease> try_acquire_for(const std::chrono::duration<Rep, Period>& timeout, std::error_code& ec) {
        return acquire_until(detail::deadline_after(timeout), ec);
    }

    /// Signature: void(std::error_code, Lease). Cancellation (terminal, partial,
    /// total): the waiter leaves the queue and its node is deleted; the handler gets
    /// std::errc::operation_canceled and an empty Lease.
    template <class CompletionToken> auto async_acquire(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, Lease)>(
            [this](auto handler) { async_acquire_impl(std::move(handler)); }, token);
    }
    /// As try_acquire: void(std::error_code, std::optional<Lease>), an empty
    /// optional and no error when no permit is free. Cancellation as async_acquire.
    template <class CompletionToken> auto async_try_acquire(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, std::optional<Lease>)>(
            [this](auto handler) { async_try_acquire_impl(std::nullopt, true, std::move(handler)); }, token);
    }
    /// As try_acquire_for: void(std::error_code, std::optional<Lease>), an empty
    /// optional and no error when `timeout` passed (the waiter's node is deleted).
    template <class Rep, class Period, class CompletionToken>
    auto async_try_acquire_for(const std::chrono::duration<Rep, Period>& timeout, CompletionToken&& token) {
        const auto deadline = detail::deadline_after(timeout);
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, std::optional<Lease>)>(
            [this, deadline](auto handler) { async_try_acquire_impl(deadline, false, std::move(handler)); }, token);
    }

    /// One permit as a Mutex (and so a Lock): lock() waits for a lease of this
    /// semaphore (FIFO with every other waiter, Leases and permits alike),
    /// unlock() gives it back, and every other form of Lock (try_lock_for,
    /// async_lock, async_wait_lost, fencing_token, ...) works on it, as do the
    /// Mutex extras (node_path(), queue_position()). It needs the Session, not
    /// this Semaphore, to outlive it. Each call makes a new contender: one
    /// permit holds at most one lease at a time.
    Mutex permit() const;

    /// How many holders the semaphore admits at once.
    std::size_t permits() const noexcept { return permits_; }
    /// The semaphore's path.
    const std::string& path() const noexcept { return path_; }
    /// The queue as the server has it now (blocking): the first permits() hold leases.
    std::vector<contender> contenders() const;
    /// Why the last failed acquire through this object failed, in words (as
    /// Mutex::failure_detail()); empty when none failed. Never holds a secret.
    std::string failure_detail() const;

private:
    struct failure_record;
    std::unique_ptr<Mutex> make_waiter() const;
    std::optional<Lease> acquire_until(std::optional<std::chrono::steady_clock::time_point> deadline,
                                       std::error_code& ec);
    void async_acquire_impl(boost::asio::any_completion_handler<void(std::error_code, Lease)> handler);
    void async_try_acquire_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                                boost::asio::any_completion_handler<void(std::error_code, std::optional<Lease>)> handler);
    // What the three share: a waiter's acquire, completing `handler` with
    // `Result` (Lease, or std::optional<Lease>) on the handler's executor.
    template <class Result>
    void start_waiter(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                      boost::asio::any_completion_handler<void(std::error_code, Result)> handler);

    Session& session_;
    std::string path_;
    std::size_t permits_;
    SemaphoreOptions options_;
    std::shared_ptr<failure_record> last_failure_;
};

/// The permit count a zklock Semaphore keeps on `path` (the lock directory's
/// data, "permits=K"), read from the server: with it a reader of the queue
/// (`zklock status`) tells which K contenders hold. Blocking, one getData.
/// Returns nullopt, without an error, when the path is absent or keeps no count
/// (a mutex, a read-write lock, a peer's recipe). Errors: errc::invalid_path,
/// errc::would_deadlock (called on the session's own thread), and the server's
/// (errc::no_auth, a connection loss, ...).
ZKLOCK_EXPORT std::optional<std::size_t> stored_permits(Session& session, const std::string& path,
                                                        std::error_code& ec);

} // namespace zklock
