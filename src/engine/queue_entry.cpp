#include "engine/queue_entry.hpp"

#include <boost/asio/post.hpp>

#include "fsm/reply_kind.hpp"

namespace zklock::detail {
namespace asio = boost::asio;

lock_capabilities zookeeper_capabilities() noexcept {
    lock_capabilities c;
    c.backend = "zookeeper";
    c.fair_fifo = true;
    c.dead_holder = dead_holder_release::session_end;
    c.fencing_monotonic_across_failover = true;
    c.server_wakes_waiters = true;
    c.wakes_one_waiter = true;
    c.reports_loss = true;
    c.limits = "a holder paused past its session timeout may still act until told; fencing tokens close that gap";
    return c;
}

std::function<void(std::error_code)> within_session_timeout(session_impl& session,
                                                            std::function<void(std::error_code)> done,
                                                            std::error_code late) {
    // The timer keeps the session's strand as it is: as a steady_timer's
    // any_io_executor it would be allocated again for every release.
    using strand_timer = session_impl::strand_timer;
    struct once {
        std::function<void(std::error_code)> fn;
        strand_timer timer;
        void call(std::error_code ec) {
            timer.cancel();
            if (auto f = std::exchange(fn, nullptr)) f(ec);
        }
    };
    auto o = std::make_shared<once>(once{std::move(done), strand_timer(session.strand())});
    auto grace = session.negotiated_timeout();
    if (grace <= std::chrono::milliseconds::zero()) grace = session.options().session_timeout;
    o->timer.expires_after(grace);
    o->timer.async_wait([o, late](boost::system::error_code ec) {
        if (!ec) o->call(late);
    });
    return [o](std::error_code ec) { o->call(ec); };
}

queue_entry::queue_entry(std::shared_ptr<session_impl> session)
    : session_subscriber([](session_subscriber& s) noexcept -> std::shared_ptr<session_subscriber> {
          return static_cast<queue_entry&>(s).weak_from_this().lock();
      }),
      session_(std::move(session)) {}

queue_entry::~queue_entry() { session_->unsubscribe(*this); }

std::shared_ptr<loss_reports> queue_entry::losses(bool make) {
    const std::lock_guard lk(mutex_);
    if (!losses_ && make) {
        user_hooks_ = true;
        losses_ = loss_reports::make([s = session_](std::function<void()> fn) { s->post(std::move(fn)); },
                                     session_->user_executor());
    }
    return losses_;
}

std::uint64_t queue_entry::new_acquire_id(asio::cancellation_slot slot) {
    const auto id = next_waiter_id_.fetch_add(1);
    if (slot.is_connected()) {
        slot.assign([weak = weak_from_this(), id](asio::cancellation_type) {
            if (auto self = weak.lock())
                self->session_->post([self, id] {
                    if (self->deferred_start_ && self->deferred_start_->id == id) {
                        auto d = std::exchange(self->deferred_start_, nullptr);
                        d->callback(operation_aborted(), false);
                    } else if (self->phase_ == phase::acquiring && self->acquire_id_ == id) {
                        self->abandon(operation_aborted());
                    }
                });
        });
    }
    return id;
}

void queue_entry::acquire(std::optional<clock::time_point> deadline, bool no_wait, asio::cancellation_slot slot,
                          acquire_callback callback) {
    if (refusal_) {
        callback(refusal_, false);
        return;
    }
    if (session_->state() == session_state::closed) {
        // Nothing runs the session any more (its thread may be gone): answer here.
        callback(make_error_code(errc::session_closed), false);
        return;
    }
    // Whether this acquire may start is decided on the strand, where the state
    // it depends on changes: decided here, a hold whose loss was being reported
    // on the strand at this moment refused an acquire that came just after it.
    const auto id = new_acquire_id(slot);
    // Run here when this is a blocking call driving the session's loop (support/loop_baton.hpp).
    session_->run_or_post([self = shared_from_this(), id, deadline, no_wait, cb = std::move(callback)]() mutable {
        if (!self->busy_.exchange(true)) {
            self->acquire_id_ = id;
            return self->start(deadline, no_wait, std::move(cb));
        }
        // Our node went while held (is_held() is false) and why is not known yet:
        // the hold is over for the caller, so queue again once its loss has been
        // reported (report_loss() starts it). Anything else is a second acquire.
        if (self->phase_ == phase::held && self->hold_ending() && !self->deferred_start_) {
            self->deferred_start_ = std::make_unique<deferred_start>(deferred_start{id, deadline, no_wait, std::move(cb)});
            return;
        }
        cb(make_error_code(errc::already_acquiring), false);
    }, false);
}

std::error_code queue_entry::release(std::function<void(std::error_code)> done) {
    if (!held_.exchange(false)) return make_error_code(errc::not_held);
    token_ = 0;
    busy_ = false;  // the release is queued on the strand before any later acquire
    // Sent from here when this thread may run the session's loop (a Session
    // of its own thread, parked after a blocking acquire): the delete is on
    // the wire when unlock() returns, and no other thread is woken. A release
    // that waits for its answer, or tells user hooks, goes to the loop's thread.
    const bool may_take = !done && !user_hooks_.load();
    session_->run_or_post([self = shared_from_this(), done = std::move(done)]() mutable { self->do_release(std::move(done)); },
                          may_take);
    return {};
}

void queue_entry::shutdown() noexcept {
    // As release() when held: is_held() is false when this returns and the next
    // acquire, queued behind this, is accepted.
    const bool was_held = held_.exchange(false);
    if (was_held) {
        token_ = 0;
        busy_ = false;
    }
    try {
        session_->post([self = shared_from_this(), was_held] {
            if (self->phase_ == phase::acquiring) {
                self->abandon(operation_aborted());
            } else if (self->phase_ == phase::held) {
                if (auto d = std::exchange(self->deferred_start_, nullptr)) d->callback(operation_aborted(), false);
                self->do_release({});
                if (!was_held) self->busy_ = false;  // granted after the call above looked
            }
            // The callbacks stay: LeaderElection::resign() shuts a term down
            // and the same object may campaign again.
            if (auto l = self->losses(false)) l->end_waits(operation_aborted());
        });
    } catch (...) {
    }
}

void queue_entry::on_lost(std::function<void(std::error_code)> callback) { losses(true)->add_callback(std::move(callback)); }

void queue_entry::wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) {
    losses(true)->wait(slot, std::move(callback), [self = shared_from_this()] { return self->phase_ == phase::held; });
}

void queue_entry::refuse(std::error_code ec, std::string reason) {
    refusal_ = ec;
    set_failure_detail(std::move(reason));
}

std::string queue_entry::failure_detail() const {
    std::lock_guard lk(mutex_);
    return failure_detail_ ? *failure_detail_ : std::string();
}

std::optional<queue_entry::clock::time_point> queue_entry::safe_until() const noexcept {
    if (!held_.load()) return clock::time_point{};
    return session_->safe_until(hold_generation_.load());
}

lock_stats queue_entry::stats() const noexcept {
    std::lock_guard lk(mutex_);
    return stats_;
}

void queue_entry::on_event(std::function<void(lock_event)> callback) {
    if (callback) user_hooks_ = true;
    session_->post([self = shared_from_this(), cb = std::move(callback)]() mutable {
        self->event_callback_ = cb ? std::make_unique<std::function<void(lock_event)>>(std::move(cb)) : nullptr;
    });
}

void queue_entry::on_user_event(std::function<void(const lock_event&)> callback) {
    auto shared = std::make_shared<std::function<void(const lock_event&)>>(std::move(callback));
    on_event([shared, ex = session_->user_executor()](lock_event e) {
        boost::asio::post(ex, [shared, e = std::move(e)] { (*shared)(e); });
    });
}

void queue_entry::emit(lock_event e) {
    if (!event_callback_) return;  // most locks have no event hook
    e.path = event_path();
    (*event_callback_)(std::move(e));
}

std::optional<std::size_t> queue_entry::queue_position() const noexcept {
    const auto p = position_.load();
    if (p < 0) return std::nullopt;
    return static_cast<std::size_t>(p);
}

void queue_entry::on_user_position(std::function<void(std::size_t)> callback) {
    auto shared = std::make_shared<std::function<void(std::size_t)>>(std::move(callback));
    user_hooks_ = true;
    session_->post([self = shared_from_this(), shared, ex = session_->user_executor()] {
        self->position_callback_ = std::make_unique<std::function<void(std::size_t)>>(
            [shared, ex](std::size_t p) { boost::asio::post(ex, [shared, p] { (*shared)(p); }); });
    });
}

void queue_entry::set_revocation(bool revocable, revocation_handler handler) {
    revocable_ = revocable;
    if (revocable && handler) user_hooks_ = true;
    if (revocable && handler) revocation_handler_ = std::make_shared<const revocation_handler>(std::move(handler));
}

void queue_entry::revocation_requested(const std::string& path, const std::string& node, bool honour) {
    if (phase_ != phase::held) return;
    lock_event e;
    e.kind = lock_event_kind::revocation_requested;
    if (honour) e.reason = make_error_code(errc::revoked);
    emit(std::move(e));
    session_->log(log_level::warn, "lock " + event_path() + ": revocation requested of " + node +
                                       (!honour ? " (not revocable: the lock is kept)"
                                        : revocation_handler_ ? " (revocable: its handler decides)"
                                                              : " (revocable: letting go)"));
    if (!honour) return;
    if (revocation_handler_) {
        boost::asio::post(session_->user_executor(),
                          [h = revocation_handler_, r = revocation_request{path, node}] { (*h)(r); });
        return;
    }
    let_go_revoked();
}

void queue_entry::set_position(std::int64_t position) {
    if (position_.exchange(position) == position || position < 0 || !position_callback_) return;
    (*position_callback_)(static_cast<std::size_t>(position));
}

void queue_entry::report_position(std::size_t position) {
    const auto p = static_cast<std::int64_t>(position);
    if (queued_reported_ && p == reported_position_) return;
    lock_event e;
    e.kind = queued_reported_ ? lock_event_kind::moved : lock_event_kind::queued;
    e.position = position;
    queued_reported_ = true;
    reported_position_ = p;
    emit(std::move(e));
}

void queue_entry::begin_hold(std::int64_t token) {
    phase_ = phase::held;
    token_ = token;
    hold_generation_ = attempt_generation_.load();
    held_ = true;
    held_since_ = clock::now();
    {
        std::lock_guard lk(mutex_);
        ++stats_.acquisitions;
        stats_.total_wait += held_since_ - wait_started_;
    }
    if (deadline_timer_) deadline_timer_->cancel();
    lock_event e;
    e.kind = lock_event_kind::granted;
    e.waited = held_since_ - wait_started_;
    e.fencing_token = token;
    emit(std::move(e));
}

std::function<void(std::error_code)> queue_entry::stop_acquiring(std::error_code ec) {
    auto callback = std::exchange(callback_, nullptr);
    phase_ = phase::idle;
    if (deadline_timer_) deadline_timer_->cancel();
    if (queued_reported_) {
        lock_event e;
        e.kind = lock_event_kind::left;
        e.reason = ec ? ec : make_error_code(errc::timeout);  // a try that found the lock busy
        emit(std::move(e));
    }
    if (ec == errc::timeout) ec.clear();  // "not acquired", not an error
    // busy_ stays set until the callback runs: the nodes go before the acquire
    // completes, unless no server answers within the session timeout (the
    // session then owns the delete, as when it is not connected).
    return [self = shared_from_this(), ec, callback = std::move(callback)](std::error_code) {
        self->busy_ = false;
        if (callback) callback(ec, false);
    };
}

std::function<void(std::error_code)> queue_entry::end_by_release(std::function<void(std::error_code)> done) {
    phase_ = phase::idle;
    held_ = false;
    token_ = 0;
    {
        std::lock_guard lk(mutex_);
        stats_.total_hold += clock::now() - held_since_;
    }
    lock_event e;
    e.kind = lock_event_kind::released;
    e.held = clock::now() - held_since_;
    emit(std::move(e));
    if (auto l = losses(false)) l->end_waits({});
    if (!done) return done;
    return within_session_timeout(*session_, std::move(done), make_error_code(errc::timeout));
}

void queue_entry::set_failure_detail(std::string detail) {
    std::lock_guard lk(mutex_);
    failure_detail_ = detail.empty() ? nullptr : std::make_unique<const std::string>(std::move(detail));
}

void queue_entry::start(std::optional<clock::time_point> deadline, bool no_wait, acquire_callback callback) {
    phase_ = phase::acquiring;
    callback_ = std::move(callback);
    no_wait_ = no_wait;
    set_failure_detail({});
    wait_started_ = clock::now();
    queued_reported_ = false;
    reported_position_ = -1;
    if (deadline) {
        if (!deadline_timer_) deadline_timer_ = std::make_unique<timer>(session_->strand());
        deadline_timer_->expires_at(*deadline);
        // The acquire's id: an expiry already queued when its acquire ended
        // (granted in the same turn) must not end the next one.
        deadline_timer_->async_wait([weak = weak_from_this(), id = acquire_id_](boost::system::error_code ec) {
            auto self = weak.lock();
            if (!ec && self && self->phase_ == phase::acquiring && self->acquire_id_ == id)
                self->abandon(make_error_code(errc::timeout));
        });
    }
    if (no_wait_ && !session_->connected()) {
        fail(make_error_code(errc::connection_loss));
        return;
    }
    new_attempt();
}

std::unique_ptr<queue_entry::deferred_start> queue_entry::end_hold() {
    phase_ = phase::idle;
    held_ = false;
    {
        std::lock_guard lk(mutex_);
        stats_.total_hold += clock::now() - held_since_;
    }
    auto next = std::exchange(deferred_start_, nullptr);
    if (!next) busy_ = false;  // otherwise it stays set for the acquire that waited
    return next;
}

void queue_entry::report_loss(std::error_code ec, std::unique_ptr<deferred_start> next) {
    // Revoked: it let go as it was asked to, no failure.
    session_->log(ec == errc::revoked ? log_level::warn : log_level::error, "lock " + event_path() + " lost: " + ec.message());
    lock_event e;
    e.kind = lock_event_kind::lost;
    e.reason = ec;
    e.held = clock::now() - held_since_;
    emit(std::move(e));
    if (auto l = losses(false)) l->lost(ec);
    if (next && next->loss_only) {
        busy_ = false;
        return next->callback(ec, false);
    }
    if (next) {
        acquire_id_ = next->id;
        start(next->deadline, next->no_wait, std::move(next->callback));
    }
}

void queue_entry::retry_when_connected(std::function<bool()> current, std::function<void()> step) {
    session_->when_connected([self = shared_from_this(), current = std::move(current), step = std::move(step)](
                                 std::error_code ec) {
        if (!current()) return;
        if (ec) return self->fail(ec);
        step();
    });
}

void queue_entry::find_loss_reason(const std::string& dir, std::function<bool()> still_held) {
    session_->get_data(dir, {}, [self = shared_from_this(), still_held = std::move(still_held)](int rc, std::string,
                                                                                                const node_stat&) {
        if (!still_held()) return;
        if (connection_trouble(rc) || session_gone(rc)) return;
        self->lose(make_error_code(errc::node_deleted));
    });
}

void queue_entry::complete_grant() {
    if (auto callback = std::exchange(callback_, nullptr)) callback({}, true);
}

} // namespace zklock::detail
