#include "backends/redis/redis_backend.hpp"

#include "backends/redis/scripts.hpp"

#include <algorithm>

namespace zklock::detail::redis {

void redis_backend::schedule_watchdog(clock_type::duration delay) {
    delay = std::min(delay, std::max(clock_type::duration::zero(), valid_until_ - clock_type::now()));
    watchdog_timer_.expires_after(delay);
    watchdog_timer_.async_wait([self = shared_from_this(), gen = hold_gen_](boost::system::error_code ec) {
        if (!ec && self->holding_ && self->hold_gen_ == gen) self->tick();
    });
}

void redis_backend::tick() {
    const auto now = clock_type::now();
    if (now >= valid_until_) return lose(make_error_code(errc::session_expired));
    if (!renew_in_flight_) {
        renew_in_flight_ = true;
        on_all(eval(extend_script, token_, std::to_string(ttl_.count())),
               [self = shared_from_this(), gen = hold_gen_, now](std::vector<result> results) {
                   self->renewed(gen, now, results);
               });
    }
    schedule_watchdog(renew_failing_ ? ttl_ / 10 : ttl_ / 3);
}

void redis_backend::renewed(std::uint64_t gen, clock_type::time_point started,
                            const std::vector<result>& results) {
    renew_in_flight_ = false;
    if (!holding_ || gen != hold_gen_) return;
    switch (redlock::after_renewal(results, ctx_->quorum)) {
    case redlock::renewal::extended:
        valid_until_ = std::max(valid_until_, started + ttl_ - ctx_->drift);
        if (renew_failing_) ctx_->log(log_level::info, "lock " + key_ + ": renewed again");
        renew_failing_ = false;
        break;
    case redlock::renewal::lost: lose(make_error_code(errc::node_deleted)); break;  // a majority no longer holds our token
    case redlock::renewal::retry_sooner:
        if (!renew_failing_)
            ctx_->log(log_level::warn, "lock " + key_ + ": its renewal reached no majority of the " + std::to_string(n()) +
                                           " server(s); retrying every " + std::to_string((ttl_ / 10).count()) +
                                           " ms until the lease runs out");
        renew_failing_ = true;  // unreachable: retry sooner until the lease runs out
        schedule_watchdog(ttl_ / 10);
        break;
    }
}

void redis_backend::end_hold() {
    holding_ = false;
    ++hold_gen_;
    watchdog_timer_.cancel();
    fence_ = 0;
}

void redis_backend::lose(std::error_code why) {
    if (!holding_) return;
    ctx_->log(log_level::error, "lock " + key_ + " lost: " +
                                    (why == make_error_code(errc::session_expired)
                                         ? "its lease ran out before a renewal reached a majority"
                                         : why == make_error_code(errc::node_deleted) ? "its key no longer holds its token"
                                                                                      : why.message()));
    gate_.end_hold();
    end_hold();
    release_everywhere(token_, nullptr);  // wherever it may still be ours
    losses_->lost(why);
}

} // namespace zklock::detail::redis
