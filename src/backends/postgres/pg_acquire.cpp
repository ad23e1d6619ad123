#include "backends/postgres/pg_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace zklock::detail::pg {
namespace {

// The SQLSTATEs the lock statements are told apart by.
const std::error_code query_canceled = error_from_sqlstate("57014");
const std::error_code lock_not_available = error_from_sqlstate("55P03");

std::string first_text(const std::vector<result>& results) { return first_value(results).value_or(""); }

std::string random_owner() {
    static std::mutex m;
    static std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(
                                                            std::chrono::steady_clock::now().time_since_epoch().count())};
    std::lock_guard lk(m);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    return buf;
}

} // namespace

void pg_backend::start_acquire(std::optional<time_point> deadline, bool no_wait, acquire_callback cb) {
    callback_ = std::move(cb);
    ++acq_gen_;
    no_wait_ = no_wait;
    abort_.reset();
    in_flight_ = false;
    notified_in_flight_ = false;
    backoff_ = std::chrono::milliseconds(10);
    if (deadline) {
        deadline_timer_.expires_at(*deadline);
        deadline_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->abort_acquire(std::error_code{});
        });
    }
    ensure_connected([self = shared_from_this(), gen = acq_gen_](std::error_code ec) {
        if (!self->callback_ || gen != self->acq_gen_) return;  // aborted while connecting
        if (ec) return self->finish(ec, false);
        self->attempt();
    });
}

// `why`: {} for the deadline (not acquired, no error), operation_aborted for a cancel.
void pg_backend::abort_acquire(std::error_code why) {
    if (!callback_ || abort_) return;
    if (in_flight_) {
        abort_ = why;
        if (!postgres_steps::lives_by_ttl(method().kind())) send_cancel_repeatedly();
        return;  // the attempt's result settles it (and undoes a grant)
    }
    if (connecting_) drop_connection();  // may hold the schema lock: closing frees it
    connecting_ = false;
    finish(why, false);
    close_if_idle();
}

// A cancel that reaches the server before the query does is ignored, so it is
// sent again until the query answers.
void pg_backend::send_cancel_repeatedly() {
    if (!in_flight_ || !conn_) return;
    conn_->send_cancel();
    cancel_timer_.expires_after(std::chrono::milliseconds(200));
    cancel_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec) self->send_cancel_repeatedly();
    });
}

void pg_backend::attempt() {
    if (!callback_) return;
    if (!conn_ || !conn_->connected()) {
        return ensure_connected([self = shared_from_this(), gen = acq_gen_](std::error_code ec) {
            if (!self->callback_ || gen != self->acq_gen_) return;
            if (ec) return self->finish(ec, false);
            self->attempt();
        });
    }
    in_flight_ = true;
    notified_in_flight_ = false;
    auto done = [self = shared_from_this(), gen = acq_gen_](std::error_code ec, std::vector<result> results) {
        if (gen != self->acq_gen_) return self->close_if_idle();
        self->in_flight_ = false;
        self->cancel_timer_.cancel();
        self->attempt_done(ec, std::move(results));
    };
    if (!prepared_) {
        if (auto prepare = method().prepare(name_)) {
            conn_->query(std::move(prepare->sql), std::move(prepare->params), prepare->simple, no_deadline,
                         [self = shared_from_this(), gen = acq_gen_](std::error_code ec, std::vector<result>) {
                             if (!self->callback_ || gen != self->acq_gen_) return self->close_if_idle();
                             self->in_flight_ = false;
                             self->cancel_timer_.cancel();
                             if (self->abort_) return self->finish(*self->abort_, false);
                             if (ec) return self->finish(ec, false);
                             self->prepared_ = true;
                             self->attempt();
                         });
            return;
        }
    }
    counter_cells::bump(counters_.attempts);
    if (auto read = method().read(name_)) {
        // The version method reads first and sends its UPDATE with what it read.
        conn_->query(std::move(read->sql), std::move(read->params), read->simple, no_deadline,
                     [self = shared_from_this(), gen = acq_gen_, done = std::move(done)](
                         std::error_code ec, std::vector<result> results) mutable {
                         if (gen != self->acq_gen_) return self->close_if_idle();
                         const auto seen = ec ? std::nullopt : first_value(results);
                         if (ec || self->abort_ || !seen || *seen == "held") {
                             self->in_flight_ = false;
                             self->cancel_timer_.cancel();
                             return self->attempt_done(ec, {}, !ec && !seen);
                         }
                         self->send_attempt(*seen, std::move(done));
                     });
        return;
    }
    send_attempt({}, std::move(done));
}

void pg_backend::send_attempt(const std::string& observed, connection::result_callback done) {
    owner_ = random_owner();
    const std::string ttl = ttl_interval();
    auto st = method().attempt({name_, owner_, ttl, no_wait_, observed});
    conn_->query(std::move(st.sql), std::move(st.params), st.simple, no_deadline, std::move(done));
    lease_sent_ = std::chrono::steady_clock::now();
}

void pg_backend::attempt_done(std::error_code ec, std::vector<result> results, bool row_missing) {
    if (!callback_) return close_if_idle();
    const std::string value = ec ? std::string() : first_text(results);
    postgres_steps::attempt_result r;
    r.granted = !ec && !value.empty();
    r.failed = static_cast<bool>(ec);
    r.connection_lost = ec == errc::connection_loss;
    r.canceled = ec == query_canceled;
    r.lock_not_available = ec == lock_not_available;
    r.aborted = abort_.has_value();
    r.no_wait = no_wait_;
    r.row_missing = row_missing;
    const auto step = postgres_steps::after_attempt(method().kind(), r);
    using action = postgres_steps::after_attempt_step::action;
    using reason = postgres_steps::after_attempt_step::reason;
    if (step.forget_connection) conn_.reset();
    const std::error_code why = step.report == reason::abort   ? *abort_
                                : step.report == reason::error ? ec
                                                               : std::error_code{};
    switch (step.what) {
    case action::grant: return grant(std::stoll(value));
    case action::undo_grant: return undo_then_finish(why, std::stoll(value));
    case action::wait_for_release: return wait_for_release();
    case action::retry_new_row:  // the row vanished (deleted by hand): insert it again and retry
        prepared_ = false;
        if (!step.rollback_first) return attempt();
        return rollback_then([self = shared_from_this()] { self->attempt(); });
    case action::finish:
        if (step.rollback_first) return rollback_then([self = shared_from_this(), why] { self->finish(why, false); });
        return finish(why, false);
    }
}

void pg_backend::rollback_then(std::function<void()> next) {
    if (!conn_) return next();
    conn_->query("ROLLBACK", {}, true, no_deadline,
                 [self = shared_from_this(), next = std::move(next)](std::error_code ec, std::vector<result>) {
                     if (ec) self->drop_connection();  // a late cancel hit the rollback: the close ends the transaction
                     next();
                 });
}

// A grant that arrived after a cancel or the deadline: give it back first.
void pg_backend::undo_then_finish(std::error_code why, std::int64_t token) {
    releasing_ = true;
    release_on_server(token, [self = shared_from_this(), why](std::error_code) {
        self->releasing_ = false;
        self->finish(why, false);
        self->close_if_idle();
    });
}

void pg_backend::grant(std::int64_t token) {
    token_ = token;
    counter_cells::bump(counters_.acquisitions);
    if (postgres_steps::lives_by_ttl(method().kind())) {
        arm_validity(lease_sent_ + ttl_);
        schedule_renew(renew_every_);
    }
    finish({}, true);
}

void pg_backend::finish(std::error_code ec, bool acquired) {
    deadline_timer_.cancel();
    retry_timer_.cancel();
    cancel_timer_.cancel();
    waiting_ = false;
    if (auto cb = std::exchange(callback_, nullptr)) {
        gate_.end(acquired);
        cb(ec, acquired);
    }
    close_if_idle();
}

void pg_backend::wait_for_release() {
    if (notified_in_flight_) return attempt();  // released while our insert was in flight
    waiting_ = true;
    const auto cap = std::min<std::chrono::steady_clock::duration>(ttl_ / 4, std::chrono::milliseconds(500));
    std::uniform_int_distribution<long long> jitter(
        0, std::chrono::duration_cast<std::chrono::microseconds>(backoff_).count());
    const auto wait = backoff_ / 2 + std::chrono::microseconds(jitter(rng_));
    backoff_ = std::min<std::chrono::steady_clock::duration>(backoff_ * 2, cap);
    retry_timer_.expires_after(wait);
    retry_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec || !self->waiting_) return;
        self->waiting_ = false;
        counter_cells::bump(self->counters_.timer_retries);
        self->attempt();
    });
}

void pg_backend::notified() {
    if (callback_ && (in_flight_ || waiting_)) counter_cells::bump(counters_.wakeups);
    if (in_flight_) notified_in_flight_ = true;
    if (!waiting_) return;
    waiting_ = false;
    retry_timer_.cancel();
    backoff_ = std::chrono::milliseconds(10);
    attempt();
}
} // namespace zklock::detail::pg
