// The front half of the ZooKeeper queue engine (contender.hpp), for one queue
// or a lock set's several: one acquire per object, decided on the session's
// strand; an acquire made while a lost hold's reason is still unknown waits
// for it; a cancellation reaches only the acquire its slot was given to; the
// deadline; release and shutdown as the public API sees them; loss reports.
// The engine behind it creates, lists, watches, grants and deletes.
#pragma once

#include "lock/loss_reports.hpp"
#include "session/session_impl.hpp"
#include "support/blocking_call.hpp"
#include "support/io_seam.hpp"

#include <zklock/backend.hpp>
#include <zklock/lock.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/revocation.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>

namespace zklock::detail {

/// The capabilities of every ZooKeeper recipe.
lock_capabilities zookeeper_capabilities() noexcept;

/// `done`, called once: with the outcome the server gives, or with `late` when
/// none came within the session timeout (a server that takes requests and
/// answers none: the session keeps the delete and retries it). Strand only.
std::function<void(std::error_code)> within_session_timeout(session_impl& session,
                                                            std::function<void(std::error_code)> done,
                                                            std::error_code late);

/// One attempt of an engine (one node, or one set of nodes): its protocol
/// machine, and what the engine keeps for its I/O.
template <class Machine> struct engine_attempt {
    template <class Setup> engine_attempt(const Setup& setup, std::string guid) : fsm(setup, std::move(guid)) {}
    Machine fsm;
    std::function<void(std::error_code)> done;  // completes with the attempt's final delete(s)
    std::shared_ptr<timer> delay_timer;  // lock-delay's wait
    // The watch on a predecessor's `.released` sibling (fsm/release_proof.hpp)
    // while it may still fire: the session's id of it, and its path.
    std::uint64_t proof_watch = 0;
    std::string proof_path;
};

class queue_entry : public LockBackend,
                    public session_subscriber,
                    public drivable,
                    public std::enable_shared_from_this<queue_entry> {
public:
    using clock = zklock::detail::clock;  // support/io_seam.hpp
    ~queue_entry() override;

    // ---- thread-safe ----------------------------------------------------------
    /// Completes with (error, acquired); acquired is false without an error when
    /// the deadline passed or, with `no_wait`, when we would have to wait.
    /// Signalling `slot` cancels this acquire only; nothing is left behind.
    void acquire(std::optional<clock::time_point> deadline, bool no_wait, boost::asio::cancellation_slot slot,
                 acquire_callback callback) override;
    /// errc::not_held when not held; the session owns the delete until it commits.
    std::error_code release(std::function<void(std::error_code)> done) override;
    /// Releases whatever is held and stops any acquire (destructors).
    void shutdown() noexcept override;
    bool held() const noexcept override { return held_.load(); }
    bool busy() const noexcept { return busy_.load(); }
    std::int64_t fencing_token() const noexcept override { return token_.load(); }
    /// The session's safe_until() for the session the hold's attempt began on.
    std::optional<clock::time_point> safe_until() const noexcept override;
    bool on_backend_thread() const noexcept override { return session_->on_session_thread(); }
    boost::asio::any_io_executor executor() const override { return session_->user_executor(); }
    /// A blocking acquire on a Session of its own thread runs the loop on
    /// the caller's thread; it drains what is ready after the grant when the
    /// lock has user hooks (events, loss reports), which post to the user.
    drive_options drive() const noexcept override { return {session_->own_loop(), user_hooks_.load()}; }
    lock_capabilities capabilities() const noexcept override { return zookeeper_capabilities(); }
    void on_lost(std::function<void(std::error_code)> callback) override;
    void wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override;
    /// Why the last acquire failed, in words; empty when it did not.
    std::string failure_detail() const override;
    /// Every acquire fails with `ec` (a recipe's bad input, found at
    /// construction), and failure_detail() says `reason`. Before any acquire.
    void refuse(std::error_code ec, std::string reason);
    lock_stats stats() const noexcept override;
    const std::shared_ptr<session_impl>& session() const noexcept { return session_; }
    /// Called on the strand with each lock_event of this object.
    void on_event(std::function<void(lock_event)> callback);
    /// The public on_event (QueueLock's, MultiMutex's): each event posted to the
    /// session's user executor.
    void on_user_event(std::function<void(const lock_event&)> callback);
    /// Our place in line as of the last listing (0 = first; a lock set's: the
    /// farthest of its queues), none when not queued.
    std::optional<std::size_t> queue_position() const noexcept;
    /// The public on_queue_position: `callback(position)` posted to the
    /// session's user executor whenever the place changes.
    void on_user_position(std::function<void(std::size_t)> callback);
    /// Cooperative revocation (MutexOptions::revocable): honour the requests
    /// that arrive while held, by calling `handler` (posted to the session's
    /// user executor) or, without one, by letting go (a loss: errc::revoked).
    /// Before any acquire (the recipes' constructors).
    void set_revocation(bool revocable, revocation_handler handler);

protected:
    enum class phase { idle, acquiring, held };

    /// Told of the session's events once subscribed: the engine's make() calls
    /// session()->subscribe(*engine) once the engine is owned by a shared_ptr.
    explicit queue_entry(std::shared_ptr<session_impl> session);

    // What the engine does (strand only).
    /// Enqueues anew (a new node, or a new set of nodes).
    virtual void new_attempt() = 0;
    /// Stops the acquire in progress, cleans up, completes it with `ec`.
    virtual void abandon(std::error_code ec) = 0;
    /// Fails the acquire (or loses the hold) with `ec`.
    virtual void fail(std::error_code ec) = 0;
    /// Ends the hold: the delete goes to the session.
    virtual void do_release(std::function<void(std::error_code)> done) = 0;
    /// Held, and a node of ours went: the reason is not known yet.
    virtual bool hold_ending() const noexcept = 0;
    /// The hold is lost for `ec`.
    virtual void lose(std::error_code ec) = 0;
    /// The lock's path in its events and log (a lock set's paths, comma-separated).
    virtual std::string event_path() const = 0;
    /// Held and revocable, asked to let go, and no handler: ends the hold as a
    /// loss (errc::revoked), its nodes deleted as a release deletes them.
    virtual void let_go_revoked() = 0;

    /// A new acquire's id; signalling `slot` (when connected) cancels that
    /// acquire only, on the strand. Any thread.
    std::uint64_t new_acquire_id(boost::asio::cancellation_slot slot);

    // strand only
    /// Starts the acquire `acquire_id_` names: the deadline, then new_attempt().
    void start(std::optional<clock::time_point> deadline, bool no_wait, acquire_callback callback);
    struct deferred_start {
        std::uint64_t id = 0;  // for its cancellation slot
        std::optional<clock::time_point> deadline;
        bool no_wait = false;
        acquire_callback callback;
        bool loss_only = false;  // a requeue whose hold was lost: completes with the loss's reason, starts nothing
    };
    /// The hold ended by a loss: phase idle, not held, its time added to the
    /// stats; returns the acquire that waited for the loss's reason, if any
    /// (busy_ stays set for it).
    std::unique_ptr<deferred_start> end_hold();
    /// Tells the loss (`ec`) to the hold's listeners, then starts `next`.
    void report_loss(std::error_code ec, std::unique_ptr<deferred_start> next);
    void set_failure_detail(std::string detail);
    /// The grant: phase held, the token, the counters, no more deadline.
    void begin_hold(std::int64_t token);
    /// Leaves the acquire in progress (phase idle, no deadline) and returns
    /// what completes it with `ec` (a timeout: "not acquired", no error) once
    /// its nodes are gone.
    std::function<void(std::error_code)> stop_acquiring(std::error_code ec);
    /// The hold ends by a release: phase idle, not held, the counters, the
    /// loss waiters told {}. Returns `done` (if any) bounded by the session
    /// timeout: errc::timeout when no server confirms the delete by then.
    std::function<void(std::error_code)> end_by_release(std::function<void(std::error_code)> done);
    /// Runs `step` once connected while `current()` still holds; fails with
    /// the session's error when it closes first.
    void retry_when_connected(std::function<bool()> current, std::function<void()> step);
    /// A node of the hold went: one request to `dir` tells why. Only a live
    /// session answers one, so an answer means someone else deleted it
    /// (node_deleted, while `still_held()`); a dead or broken connection is
    /// followed by the session event, which tells (expired, or reconnected:
    /// alive, so it was someone else).
    void find_loss_reason(const std::string& dir, std::function<bool()> still_held);
    void complete_grant();
    /// An engine begins an attempt (creates its node or nodes) on the
    /// session now: a grant of that attempt is safe only while that session
    /// is (safe_until()). Strand.
    void note_attempt_start() noexcept { attempt_generation_ = session_->generation(); }
    /// The session the current attempt began on has a safe-time budget left
    /// now: what the machines' grant needs (session_now::budget), or a sync
    /// first. Strand.
    bool attempt_budget() const {
        return session_->safe_until(attempt_generation_.load()) > clock::now();
    }
    /// A listing placed the acquire `position` contenders from the front: the
    /// "queued" event the first time in an acquire, "moved" when it changed.
    void report_position(std::size_t position);
    /// Our place in line is now `position` (-1: none): queue_position(), and
    /// the position callback when it changed.
    void set_position(std::int64_t position);
    /// A revocation request arrived at `node` (the full path; of the lock at
    /// `path`) while held: the event and the log line; when `honour`, the
    /// handler or let_go_revoked().
    void revocation_requested(const std::string& path, const std::string& node, bool honour);
    /// Whether set_revocation() made this lock revocable.
    bool revocable() const noexcept { return revocable_; }

    std::shared_ptr<session_impl> session_;

    // strand only
    phase phase_ = phase::idle;
    acquire_callback callback_;
    std::unique_ptr<timer> deadline_timer_;  // made by the first acquire with a deadline
    bool no_wait_ = false;
    clock::time_point wait_started_{};
    clock::time_point held_since_{};
    std::unique_ptr<deferred_start> deferred_start_;  // rare: behind a pointer
    std::uint64_t acquire_id_ = 0;  // the acquire in progress (phase acquiring)

    // thread-safe snapshots
    std::atomic<bool> held_{false};
    std::atomic<bool> busy_{false};  // acquiring or held, as the public API sees it
    std::atomic<std::int64_t> token_{0};
    std::atomic<std::uint64_t> attempt_generation_{0};  // the session (generation()) the current attempt began on
    std::atomic<std::uint64_t> hold_generation_{0};     // the one the hold's attempt began on
    mutable std::mutex mutex_;  // guards failure_detail_, stats_, losses_ and what the engines keep under it
    std::unique_ptr<const std::string> failure_detail_;  // null while the last acquire has not failed
    lock_stats stats_;
    /// Any thread: the hold's loss listeners (on_lost, wait_lost); null until
    /// the first of them when not `make`: most locks never have one.
    std::shared_ptr<loss_reports> losses(bool make);

private:
    void emit(lock_event e);

    std::error_code refusal_;  // set once, before any acquire (refuse())
    std::shared_ptr<loss_reports> losses_;  // under mutex_; made by losses(true)
    std::atomic<std::uint64_t> next_waiter_id_{1};  // acquires' ids, for their cancellation slots
    // strand only
    std::unique_ptr<std::function<void(lock_event)>> event_callback_;  // made by on_event: most locks have none
    bool queued_reported_ = false;         // this acquire's "queued" event went out
    std::int64_t reported_position_ = -1;  // the position its last event carried
    std::unique_ptr<std::function<void(std::size_t)>> position_callback_;  // made by on_user_position: most locks have none
    bool revocable_ = false;                                     // set once, before any acquire
    std::shared_ptr<const revocation_handler> revocation_handler_;  // null: let go
    std::atomic<std::int64_t> position_{-1};  // thread-safe snapshot
    std::atomic<bool> user_hooks_{false};     // an event, position or loss hook: completions posted to the user
};

} // namespace zklock::detail
