#include "backends/mysql/my_backend.hpp"

namespace zklock::detail::mysql {

void my_backend::arm_validity(time_point until) {
    valid_timer_.expires_at(until);
    valid_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec && self->gate_.held()) self->lost(make_error_code(errc::session_expired));
    });
}

void my_backend::schedule_renew(std::chrono::steady_clock::duration after) {
    renew_timer_.expires_after(after);
    renew_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec) self->renew();
    });
}

void my_backend::renew() {
    if (!gate_.held()) return;
    ensure_connected([self = shared_from_this()](std::error_code ec) {
        if (!self->gate_.held()) return self->close_if_idle();
        if (ec) return self->schedule_renew(std::chrono::milliseconds(100));
        const auto sent = std::chrono::steady_clock::now();
        self->conn_->query(mysql_sql::renew(self->method(), self->args()),
                           [self, sent](std::error_code ec2, std::vector<result> results, std::string) {
                               if (!self->gate_.held()) return self->close_if_idle();
                               const std::uint64_t matched = ec2 || results.empty() ? 0 : results.back().affected;
                               switch (mysql_steps::after_renewal(static_cast<bool>(ec2), matched)) {
                               case mysql_steps::renewal::retry_soon:
                                   return self->schedule_renew(std::chrono::milliseconds(100));
                               case mysql_steps::renewal::lost: return self->lost(make_error_code(errc::node_deleted));
                               case mysql_steps::renewal::extended:
                                   self->arm_validity(sent + self->ttl_);
                                   self->schedule_renew(self->renew_every_);
                                   return;
                               }
                           });
    });
}

void my_backend::lost(std::error_code why) {
    if (!gate_.end_hold()) return;
    ctx_->log(log_level::error, "lock " + name_ + " lost: " +
                                    (why == make_error_code(errc::session_expired)
                                         ? (mysql_steps::lives_by_ttl(method())
                                                ? "its lease ran out before a renewal reached the server"
                                                : "the server ended the connection that held it")
                                         : why == make_error_code(errc::node_deleted) ? "another owner holds its lease"
                                                                                      : why.message()));
    renew_timer_.cancel();
    valid_timer_.cancel();
    losses_->lost(why);
    if (!mysql_steps::lives_by_ttl(method())) drop_connection();  // a row lock's transaction, if any, goes with it
    close_if_idle();
}

void my_backend::do_release(std::function<void(std::error_code)> done) {
    renew_timer_.cancel();
    valid_timer_.cancel();
    losses_->end_waits({});
    releasing_ = true;
    release_on_server([self = shared_from_this(), done = std::move(done)](std::error_code ec) {
        self->releasing_ = false;
        if (done) done(ec);
        self->close_if_idle();
    });
}

void my_backend::release_on_server(std::function<void(std::error_code)> done) {
    if (!conn_ || !conn_->connected()) {
        // GET_LOCK and row locks went with the connection; a lease row stays until its TTL.
        conn_.reset();
        return done({});
    }
    auto cb = [self = shared_from_this(), done = std::move(done)](std::error_code ec, std::vector<result>, std::string) {
        // A failed release (e.g. an operator's KILL QUERY) must not leave the
        // lock held: closing the connection ends the session, and the lock.
        if (ec && !mysql_steps::lives_by_ttl(self->method())) {
            self->drop_connection();
            ec = {};
        }
        done(ec);
    };
    conn_->query(mysql_sql::release(method(), args()), std::move(cb));
}

} // namespace zklock::detail::mysql
