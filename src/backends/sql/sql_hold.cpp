// sql_lock's held lock: lease renewal and validity, loss, release.
#include "backends/sql/sql_lock.hpp"

namespace zklock::detail::sql {

void sql_lock::arm_validity(time_point until) {
    valid_timer_.expires_at(until);
    valid_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec && self->gate_.held()) self->lost(make_error_code(errc::session_expired));
    });
}

void sql_lock::schedule_renew(duration after) {
    renew_timer_.expires_after(after);
    renew_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec) self->renew();
    });
}

void sql_lock::renew() {
    if (!gate_.held()) return;
    ensure_connected([self = shared_from_this()](std::error_code ec) {
        if (!self->gate_.held()) return self->close_if_idle();
        if (ec) return self->schedule_renew(std::chrono::milliseconds(100));
        const auto sent = std::chrono::steady_clock::now();
        self->send_renewal([self, sent](bool failed, std::uint64_t matched) {
            if (!self->gate_.held()) return self->close_if_idle();
            switch (sql_steps::after_renewal(failed, matched)) {
            case sql_steps::renewal::retry_soon: return self->schedule_renew(std::chrono::milliseconds(100));
            case sql_steps::renewal::lost: return self->lost(make_error_code(errc::node_deleted));
            case sql_steps::renewal::extended:
                self->arm_validity(sent + self->ttl_);
                self->schedule_renew(self->ctx_->renew_every);
                return;
            }
        });
    });
}

void sql_lock::lost(std::error_code why) {
    if (!gate_.end_hold()) return;
    ctx_->log(log_level::error, "lock " + name_ + " lost: " +
                                    (why == make_error_code(errc::session_expired)
                                         ? (by_ttl() ? "its lease ran out before a renewal reached the server"
                                                     : "the server ended the connection that held it")
                                         : why == make_error_code(errc::node_deleted) ? "another owner holds its lease"
                                                                                      : why.message()));
    renew_timer_.cancel();
    valid_timer_.cancel();
    if (!by_ttl()) close_connection();  // a row lock's transaction, if any, goes with it
    losses_->lost(why);
    close_if_idle();
}

void sql_lock::do_release(std::function<void(std::error_code)> done) {
    renew_timer_.cancel();
    valid_timer_.cancel();
    losses_->end_waits({});
    releasing_ = true;
    release_on_server(token_.load(), [self = shared_from_this(), done = std::move(done)](std::error_code ec) {
        self->releasing_ = false;
        if (done) done(ec);
        self->close_if_idle();
    });
}

void sql_lock::release_on_server(std::int64_t token, std::function<void(std::error_code)> done) {
    if (!connection_open()) {
        // Advisory and row locks went with the connection; a lease row stays until its TTL.
        close_connection();
        return done({});
    }
    send_release(token, [self = shared_from_this(), done = std::move(done)](std::error_code ec) {
        // A failed release (e.g. hit by a late cancel, or an operator's KILL
        // QUERY) must not leave the lock held: closing the connection ends the
        // session, and with it the lock.
        if (ec && !self->by_ttl()) {
            self->close_connection();
            ec = {};
        }
        done(ec);
    });
}

} // namespace zklock::detail::sql
