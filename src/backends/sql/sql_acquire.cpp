// sql_lock's acquire: deadline, cancel, attempts' outcomes, waiting for a release.
#include "backends/sql/sql_lock.hpp"

#include <algorithm>

namespace zklock::detail::sql {

void sql_lock::start_acquire(std::optional<time_point> deadline, bool no_wait, acquire_callback cb) {
    callback_ = std::move(cb);
    ++acq_gen_;
    no_wait_ = no_wait;
    abort_.reset();
    in_flight_ = false;
    notified_in_flight_ = false;
    backoff_ = poll_.first;
    note_failure({});
    if (deadline) {
        deadline_timer_.expires_at(*deadline);
        deadline_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->abort_acquire(std::error_code{});
        });
    }
    attempt();
}

// `why`: {} for the deadline (not acquired, no error), operation_aborted for a cancel.
void sql_lock::abort_acquire(std::error_code why) {
    if (!callback_ || abort_) return;
    if (in_flight_) {
        abort_ = why;
        if (!interrupt_attempt()) return;  // the attempt's answer settles it (and undoes a grant)
        // The statement may be waiting on the server, or may have been granted
        // there a moment ago: ending the connection ends its session, and with
        // it the wait, the transaction and any lock it took.
        in_flight_ = false;
        close_connection();
        return finish(why, false);
    }
    if (connecting_) close_connection();  // may hold the schema lock: closing frees it
    connecting_ = false;
    finish(why, false);
    close_if_idle();
}

void sql_lock::attempt() {
    if (!callback_) return;
    if (!connection_open()) {
        return ensure_connected([self = shared_from_this(), gen = acq_gen_](std::error_code ec) {
            if (!self->callback_ || gen != self->acq_gen_) return;  // aborted while connecting
            if (ec) return self->finish(ec, false);
            self->attempt();
        });
    }
    send_attempt();
}

void sql_lock::retry_now() {
    if (!callback_) return close_if_idle();
    if (abort_) return finish(*abort_, false);
    attempt();
}

void sql_lock::follow(const sql_steps::after_attempt_step& step, std::error_code ec, std::int64_t token) {
    if (!callback_) return close_if_idle();
    using action = sql_steps::after_attempt_step::action;
    using reason = sql_steps::after_attempt_step::reason;
    // Closed, not only forgotten: a connection someone else still refers to
    // would keep its server session, and an open transaction with it.
    if (step.forget_connection) close_connection();
    const std::error_code why = step.report == reason::abort   ? abort_.value_or(std::error_code{})
                                : step.report == reason::error ? ec
                                                               : std::error_code{};
    auto then = [this, &step](std::function<void()> next) {
        if (step.rollback_first) return rollback_then(std::move(next));
        next();
    };
    switch (step.what) {
    case action::grant: return grant(token);
    case action::undo_grant: return undo_then_finish(why, token);
    case action::wait_for_release: return wait_for_release();
    case action::retry_new_row:  // the row vanished (deleted by hand): insert it again and retry
        prepared_ = false;
        [[fallthrough]];
    case action::retry: return then([self = shared_from_this()] { self->retry_now(); });
    case action::finish: return then([self = shared_from_this(), why] { self->finish(why, false); });
    }
}

void sql_lock::rollback_then(std::function<void()> next) {
    if (!connection_open()) return next();
    send_rollback([self = shared_from_this(), next = std::move(next)](std::error_code ec) {
        if (ec) self->close_connection();  // a late cancel hit the rollback: the close ends the transaction
        next();
    });
}

// A grant that arrived after a cancel or the deadline: give it back first.
void sql_lock::undo_then_finish(std::error_code why, std::int64_t token) {
    releasing_ = true;
    release_on_server(token, [self = shared_from_this(), why](std::error_code) {
        self->releasing_ = false;
        self->finish(why, false);
        self->close_if_idle();
    });
}

void sql_lock::grant(std::int64_t token) {
    token_ = token;
    counter_cells::bump(counters_.acquisitions);
    if (by_ttl()) {
        arm_validity(lease_sent_ + ttl_);
        schedule_renew(ctx_->renew_every);
    }
    finish({}, true);
}

void sql_lock::finish(std::error_code ec, bool acquired) {
    deadline_timer_.cancel();
    retry_timer_.cancel();
    attempt_settled();
    waiting_ = false;
    if (auto cb = std::exchange(callback_, nullptr)) {
        gate_.end(acquired);
        cb(ec, acquired);
    }
    close_if_idle();
}

// Waits for a lease's release: a notification (PostgreSQL) cuts the wait
// short; otherwise poll with a jittered, doubling backoff, capped well below
// the ttl.
void sql_lock::wait_for_release() {
    if (notified_in_flight_) return attempt();  // released while our attempt was in flight
    waiting_ = true;
    const auto cap = std::min<duration>(ttl_ / 4, poll_.cap);
    std::uniform_int_distribution<long long> jitter(
        0, std::chrono::duration_cast<std::chrono::microseconds>(backoff_).count());
    const auto wait = backoff_ / 2 + std::chrono::microseconds(jitter(rng_));
    backoff_ = std::min<duration>(backoff_ * 2, cap);
    retry_timer_.expires_after(wait);
    retry_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec || !self->waiting_) return;
        self->waiting_ = false;
        counter_cells::bump(self->counters_.timer_retries);
        self->attempt();
    });
}

void sql_lock::notified() {
    if (callback_ && (in_flight_ || waiting_)) counter_cells::bump(counters_.wakeups);
    if (in_flight_) notified_in_flight_ = true;
    if (!waiting_) return;
    waiting_ = false;
    retry_timer_.cancel();
    backoff_ = poll_.first;
    attempt();
}

} // namespace zklock::detail::sql
