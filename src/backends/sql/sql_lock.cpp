#include "backends/sql/sql_lock.hpp"

#include <boost/asio/post.hpp>

#include <cstdio>

namespace zklock::detail::sql {
namespace asio = boost::asio;

sql_lock::sql_lock(std::shared_ptr<sql_context> ctx, std::string name, poll_backoff poll)
    : name_(std::move(name)), ttl_(ctx->lease_ttl), ctx_(std::move(ctx)), poll_(poll), deadline_timer_(ctx_->strand),
      retry_timer_(ctx_->strand), renew_timer_(ctx_->strand), valid_timer_(ctx_->strand),
      losses_(detail::loss_reports::make([c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); },
                                         ctx_->executor)) {}

void sql_lock::acquire(std::optional<time_point> deadline, bool no_wait, asio::cancellation_slot slot,
                       acquire_callback callback) {
    const auto post = [c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); };
    if (begin_acquire(shared_from_this(), &sql_lock::gate_, post, slot, callback,
                      [](sql_lock& l) { l.abort_acquire(operation_aborted()); }) == 0)
        return;
    asio::post(ctx_->strand, [self = shared_from_this(), deadline, no_wait, cb = std::move(callback)]() mutable {
        self->start_acquire(deadline, no_wait, std::move(cb));
    });
}

std::error_code sql_lock::release(std::function<void(std::error_code)> done) {
    // A new acquire may start from now on: it queues behind the release on the connection.
    if (!gate_.release()) return make_error_code(errc::not_held);
    asio::post(ctx_->strand, [self = shared_from_this(), done = std::move(done)]() mutable {
        self->do_release(std::move(done));
    });
    return {};
}

void sql_lock::shutdown() noexcept {
    try {
        asio::post(ctx_->strand, [self = shared_from_this()] {
            self->shutting_down_ = true;
            if (self->callback_) self->abort_acquire(operation_aborted());
            if (self->gate_.end_hold()) self->do_release(nullptr);
            self->losses_->end_waits(operation_aborted());
            self->losses_->forget_callbacks();
            self->close_if_idle();
        });
    } catch (...) {
    }
}

void sql_lock::wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) {
    losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->gate_.held(); });
}

std::string sql_lock::failure_detail() const {
    std::lock_guard lk(detail_m_);
    return detail_;
}

void sql_lock::note_failure(const std::string& what) {
    std::lock_guard lk(detail_m_);
    detail_ = what;
}

std::string sql_lock::random_owner() {
    static std::mutex m;
    static std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(
                                                            std::chrono::steady_clock::now().time_since_epoch().count())};
    std::lock_guard lk(m);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    return buf;
}

void sql_lock::end_of_service() {
    cancel_timers();
    close_connection();
    gate_.end_hold();
    if (callback_) finish(make_error_code(errc::session_closed), false);
    losses_->end_waits(make_error_code(errc::session_closed));
}

void sql_lock::ensure_connected(std::function<void(std::error_code)> next) {
    if (ctx_->ended) return next(make_error_code(errc::session_closed));
    if (connection_open()) return next({});
    close_connection();
    connecting_ = true;
    open_connection([self = shared_from_this(), next = std::move(next)](std::error_code ec) {
        self->connecting_ = false;
        next(ec);
    });
}

void sql_lock::log_connect(const std::string& endpoint, std::error_code ec, const std::string& message) {
    if (!ec) return ctx_->log(log_level::info, "lock " + name_ + ": connected to " + endpoint);
    note_failure("cannot connect to " + endpoint + ": " + message);
    ctx_->log(log_level::warn, "lock " + name_ + ": cannot connect to " + endpoint + ": " + message);
}

void sql_lock::connection_ended() {
    const auto where = connection_endpoint();
    close_connection();
    if (!gate_.held()) return;
    ctx_->log(log_level::warn, "lock " + name_ + ": connection to " + where + " lost while held" +
                                   (by_ttl() ? "; reconnecting to renew the lease" : ""));
    if (by_ttl()) {
        // The lease lives on the server until its TTL: reconnect and renew.
        renew_timer_.expires_after(std::chrono::milliseconds(0));
        renew_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->renew();
        });
        return;
    }
    lost(make_error_code(errc::session_expired));  // the server released the lock with the connection
}

void sql_lock::close_if_idle() {
    if (!shutting_down_ || callback_ || releasing_ || connection_busy()) return;
    cancel_timers();
    close_connection();
}

void sql_lock::cancel_timers() {
    deadline_timer_.cancel();
    retry_timer_.cancel();
    renew_timer_.cancel();
    valid_timer_.cancel();
    attempt_settled();
}

} // namespace zklock::detail::sql
