#include "backends/postgres/pg_backend.hpp"

namespace zklock::detail::pg {

void pg_backend::arm_validity(time_point until) {
    valid_timer_.expires_at(until);
    valid_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec && self->gate_.held()) self->lost(make_error_code(errc::session_expired));
    });
}

void pg_backend::schedule_renew(std::chrono::steady_clock::duration after) {
    renew_timer_.expires_after(after);
    renew_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec) self->renew();
    });
}

void pg_backend::renew() {
    if (!gate_.held()) return;
    ensure_connected([self = shared_from_this()](std::error_code ec) {
        if (!self->gate_.held()) return self->close_if_idle();
        if (ec) return self->schedule_renew(std::chrono::milliseconds(100));
        const auto sent = std::chrono::steady_clock::now();
        const std::string ttl = self->ttl_interval();
        auto st = self->method().renew({self->name_, self->owner_, ttl, false, {}, self->token_.load()});
        if (!st) return;
        self->conn_->query(std::move(st->sql), std::move(st->params), st->simple, no_deadline,
                           [self, sent](std::error_code ec2, std::vector<result> results) {
                               if (!self->gate_.held()) return self->close_if_idle();
                               const char* rows = ec2 || results.empty() ? "0" : PQcmdTuples(results.back().get());
                               switch (postgres_steps::after_renewal(static_cast<bool>(ec2), rows)) {
                               case postgres_steps::renewal::retry_soon:
                                   return self->schedule_renew(std::chrono::milliseconds(100));
                               case postgres_steps::renewal::lost: return self->lost(make_error_code(errc::node_deleted));
                               case postgres_steps::renewal::extended:
                                   self->arm_validity(sent + self->ttl_);
                                   self->schedule_renew(self->renew_every_);
                                   return;
                               }
                           });
    });
}

void pg_backend::lost(std::error_code why) {
    if (!gate_.end_hold()) return;
    ctx_->log(log_level::error, "lock " + name_ + " lost: " +
                                    (why == make_error_code(errc::session_expired)
                                         ? (postgres_steps::lives_by_ttl(method().kind())
                                                ? "its lease ran out before a renewal reached the server"
                                                : "the server ended the connection that held it")
                                         : why == make_error_code(errc::node_deleted) ? "another owner holds its lease"
                                                                                      : why.message()));
    renew_timer_.cancel();
    valid_timer_.cancel();
    losses_->lost(why);
    close_if_idle();
}

void pg_backend::do_release(std::function<void(std::error_code)> done) {
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

void pg_backend::release_on_server(std::int64_t token, std::function<void(std::error_code)> done) {
    if (!conn_ || !conn_->connected()) {
        // Advisory and row locks went with the connection; a lease row stays until its TTL.
        conn_.reset();
        return done({});
    }
    auto cb = [self = shared_from_this(), done = std::move(done)](std::error_code ec, std::vector<result>) {
        // A failed release (e.g. hit by a late cancel) must not leave the lock held:
        // closing the connection ends the session, and with it the lock.
        if (ec && !postgres_steps::lives_by_ttl(self->method().kind())) {
            self->drop_connection();
            ec = {};
        }
        done(ec);
    };
    auto st = method().release(name_, owner_, channel_, token);
    conn_->query(std::move(st.sql), std::move(st.params), st.simple, no_deadline, std::move(cb));
}

} // namespace zklock::detail::pg
