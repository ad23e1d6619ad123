#include "backends/mysql/my_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>

namespace zklock::detail::mysql {
namespace {

using mysql_steps::error_from_mysql;

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

// A token: a positive integer (the sequence's or the version's); 0 otherwise.
std::int64_t token_of(const std::optional<std::string>& value) {
    if (!value || value->empty()) return 0;
    try {
        return std::stoll(*value);
    } catch (...) {
        return 0;
    }
}

} // namespace

void my_backend::start_acquire(std::optional<time_point> deadline, bool no_wait, acquire_callback cb) {
    callback_ = std::move(cb);
    ++acq_gen_;
    no_wait_ = no_wait;
    abort_.reset();
    in_flight_ = false;
    backoff_ = std::chrono::milliseconds(2);
    note_failure({});
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
void my_backend::abort_acquire(std::error_code why) {
    if (!callback_ || abort_) return;
    if (in_flight_ && mysql_steps::waits_on_server(method())) {
        // The statement may be waiting on the server (FOR UPDATE, GET_LOCK), or
        // may have been granted there a moment ago: ending the connection ends
        // its session, and with it the wait, the transaction and any lock it
        // took. (A KILL QUERY could not be aimed: one that arrives late
        // interrupts whatever statement the connection runs next.)
        in_flight_ = false;
        drop_connection();
        finish(why, false);
        return;
    }
    if (in_flight_) {
        abort_ = why;
        return;  // the attempt's answer settles it (and undoes a grant)
    }
    if (connecting_) drop_connection();
    connecting_ = false;
    finish(why, false);
    close_if_idle();
}

void my_backend::attempt() {
    if (!callback_) return;
    if (!conn_ || !conn_->connected()) {
        return ensure_connected([self = shared_from_this(), gen = acq_gen_](std::error_code ec) {
            if (!self->callback_ || gen != self->acq_gen_) return;
            if (ec) return self->finish(ec, false);
            self->attempt();
        });
    }
    if (!prepared_ && (method() == mysql_steps::method::row || method() == mysql_steps::method::version))
        return prepare_row();
    owner_ = random_owner();
    in_flight_ = true;
    conn_->query(mysql_sql::attempt(method(), args()),
                 [self = shared_from_this(), gen = acq_gen_](std::error_code ec, std::vector<result> results,
                                                             std::string message) {
                     if (gen != self->acq_gen_) return self->close_if_idle();
                     self->in_flight_ = false;
                     if (ec) self->note_failure(message);
                     mysql_steps::attempt_result r;
                     if (!ec && self->method() == mysql_steps::method::version) {
                         const auto& rows = results.empty() ? std::vector<std::vector<std::optional<std::string>>>{}
                                                            : results.back().rows;
                         std::optional<std::string_view> v, free;
                         if (!rows.empty() && rows.front().size() >= 2) {
                             if (rows.front()[0]) v = *rows.front()[0];
                             if (rows.front()[1]) free = *rows.front()[1];
                         }
                         const auto read = mysql_steps::read_version(v, free);
                         if (read.row_found && read.free && !self->abort_) return self->take_version(read.version);
                         r.row_missing = !read.row_found;
                         return self->attempt_done(ec, {}, r);  // the read holds no token
                     }
                     self->attempt_done(ec, results, r);
                 });
    lease_sent_ = std::chrono::steady_clock::now();
    counter_cells::bump(counters_.attempts);
}

// row: a consistent read first, so that a try_lock never waits on the holder's
// record lock (an INSERT IGNORE of an existing row would); version: the row
// is never locked for long, INSERT IGNORE at once.
void my_backend::prepare_row() {
    in_flight_ = true;
    auto inserted = [self = shared_from_this(), gen = acq_gen_](std::error_code ec, std::vector<result>,
                                                                std::string message) {
        if (!self->callback_ || gen != self->acq_gen_) return self->close_if_idle();
        self->in_flight_ = false;
        if (self->abort_) return self->finish(*self->abort_, false);
        if (ec) {
            self->note_failure(message);
            return self->finish(ec, false);
        }
        self->prepared_ = true;
        self->attempt();
    };
    if (method() == mysql_steps::method::version) return conn_->query(mysql_sql::insert_row(method(), name_), inserted);
    conn_->query(mysql_sql::row_exists(method(), name_),
                 [self = shared_from_this(), gen = acq_gen_, inserted](std::error_code ec, std::vector<result> results,
                                                                       std::string message) mutable {
                     if (!ec && last_value(results) == std::optional<std::string>("0") && self->conn_ &&
                         gen == self->acq_gen_)
                         return self->conn_->query(mysql_sql::insert_row(self->method(), self->name_), inserted);
                     if (ec || gen != self->acq_gen_) return inserted(ec, std::move(results), std::move(message));
                     inserted({}, {}, {});  // the row exists
                 });
}

void my_backend::take_version(std::int64_t read) {
    version_ = read;
    in_flight_ = true;
    lease_sent_ = std::chrono::steady_clock::now();
    conn_->query(mysql_sql::version_take(args()), [self = shared_from_this(), gen = acq_gen_, read](
                                                      std::error_code ec, std::vector<result> results, std::string message) {
        if (gen != self->acq_gen_) return self->close_if_idle();
        self->in_flight_ = false;
        if (ec) self->note_failure(message);
        std::vector<result> token;
        if (!ec && !results.empty() && results.back().affected == 1) {
            result r;
            r.rows.push_back({std::to_string(read + 1)});
            token.push_back(std::move(r));
            self->version_ = read + 1;
        }
        self->attempt_done(ec, token, {});
    });
}

void my_backend::attempt_done(std::error_code ec, const std::vector<result>& results, mysql_steps::attempt_result r) {
    if (!callback_) return close_if_idle();
    const std::int64_t token = ec ? 0 : token_of(last_value(results));
    r.granted = token > 0;
    r.failed = static_cast<bool>(ec);
    r.connection_lost = ec == errc::connection_loss;
    r.canceled = ec == error_from_mysql(mysql_steps::er_query_interrupted);
    r.busy = ec == error_from_mysql(mysql_steps::er_dup_entry);
    r.deadlock = ec == error_from_mysql(mysql_steps::er_lock_deadlock);
    r.lock_not_available =
        ec == error_from_mysql(mysql_steps::er_lock_wait_timeout) || ec == error_from_mysql(mysql_steps::er_lock_nowait);
    r.aborted = abort_.has_value();
    r.no_wait = no_wait_;
    const auto step = mysql_steps::after_attempt(method(), r);
    using action = mysql_steps::after_attempt_step::action;
    using reason = mysql_steps::after_attempt_step::reason;
    // Closed, not only forgotten: a connection someone else still refers to
    // would keep its server session, and an open transaction with it.
    if (step.forget_connection) drop_connection();
    const std::error_code why = step.report == reason::abort   ? *abort_
                                : step.report == reason::error ? ec
                                                               : std::error_code{};
    switch (step.what) {
    case action::grant: return grant(token);
    case action::undo_grant: return undo_then_finish(why);
    case action::wait_for_release: return wait_for_release();
    case action::retry:
        if (step.rollback_first) return rollback_then([self = shared_from_this()] { self->retry_now(); });
        return retry_now();
    case action::retry_new_row:
        prepared_ = false;
        if (step.rollback_first) return rollback_then([self = shared_from_this()] { self->retry_now(); });
        return retry_now();
    case action::finish:
        if (step.rollback_first) return rollback_then([self = shared_from_this(), why] { self->finish(why, false); });
        return finish(why, false);
    }
}

void my_backend::retry_now() {
    if (!callback_) return close_if_idle();
    if (abort_) return finish(*abort_, false);
    attempt();
}

void my_backend::rollback_then(std::function<void()> next) {
    if (!conn_ || !conn_->connected()) return next();
    conn_->query(mysql_sql::rollback, [self = shared_from_this(), next = std::move(next)](std::error_code ec,
                                                                                        std::vector<result>, std::string) {
        if (ec) self->drop_connection();  // the close ends the transaction
        next();
    });
}

// A grant that arrived after a cancel or the deadline: give it back first.
void my_backend::undo_then_finish(std::error_code why) {
    releasing_ = true;
    release_on_server([self = shared_from_this(), why](std::error_code) {
        self->releasing_ = false;
        self->finish(why, false);
        self->close_if_idle();
    });
}

void my_backend::grant(std::int64_t token) {
    token_ = token;
    counter_cells::bump(counters_.acquisitions);
    if (mysql_steps::lives_by_ttl(method())) {
        arm_validity(lease_sent_ + ttl_);
        schedule_renew(renew_every_);
    }
    finish({}, true);
}

void my_backend::finish(std::error_code ec, bool acquired) {
    deadline_timer_.cancel();
    retry_timer_.cancel();
    waiting_ = false;
    if (auto cb = std::exchange(callback_, nullptr)) {
        gate_.end(acquired);
        cb(ec, acquired);
    }
    close_if_idle();
}

// No notification reaches a waiter: poll with a jittered, doubling backoff,
// capped well below the ttl.
void my_backend::wait_for_release() {
    waiting_ = true;
    const auto cap = std::min<std::chrono::steady_clock::duration>(ttl_ / 4, std::chrono::milliseconds(50));
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

} // namespace zklock::detail::mysql
