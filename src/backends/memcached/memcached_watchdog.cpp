#include "backends/memcached/memcached_backend.hpp"

#include <algorithm>

namespace zklock::detail::memcached {

void memcached_backend::schedule_watchdog(clock_type::duration delay) {
    delay = std::min(delay, std::max(clock_type::duration::zero(), valid_until_ - clock_type::now()));
    watchdog_timer_.expires_after(delay);
    watchdog_timer_.async_wait([self = shared_from_this(), gen = hold_gen_](boost::system::error_code ec) {
        if (!ec && self->holding_ && self->hold_gen_ == gen) self->tick();
    });
}

void memcached_backend::tick() {
    const auto started = clock_type::now();
    if (started >= valid_until_) return lose(make_error_code(errc::session_expired));
    auto& c = ctx_->client;
    const auto got = c.gets(key_);
    const auto o = owner_of(got.a, got.value, owner_);
    outcome cas;
    if (o == ownership::ours) cas = c.cas(key_, owner_, ttl_s_, got.cas);
    switch (after_renew(o, cas.a)) {
    case renewal::extended:
        valid_until_ = std::max(valid_until_, started + lease_validity(ttl_));
        if (renew_failing_) ctx_->log(log_level::info, "lock " + key_ + ": renewed again");
        renew_failing_ = false;
        return schedule_watchdog(ttl_ / 3);
    case renewal::lost: return lose(make_error_code(errc::node_deleted));
    case renewal::retry_sooner:
        if (!renew_failing_)
            ctx_->log(log_level::warn, "lock " + key_ + ": its renewal failed (" +
                                           (got.error ? got.error : cas.error).message() + "); retrying every " +
                                           std::to_string((ttl_ / 10).count()) + " ms until the lease runs out");
        renew_failing_ = true;
        return schedule_watchdog(ttl_ / 10);
    }
}

void memcached_backend::end_hold() {
    holding_ = false;
    ++hold_gen_;
    watchdog_timer_.cancel();
}

void memcached_backend::lose(std::error_code why) {
    if (!holding_) return;
    ctx_->log(log_level::error, "lock " + key_ + " lost: " +
                                    (why == make_error_code(errc::session_expired)
                                         ? "its lease ran out before a renewal reached the server"
                                         : why == make_error_code(errc::node_deleted) ? "its key no longer holds its owner id"
                                                                                      : why.message()));
    gate_.end_hold();
    end_hold();
    delete_if_ours(owner_);  // in case it is still ours
    losses_->lost(why);
}

} // namespace zklock::detail::memcached
