#include "backends/redis/redis_backend.hpp"

#include "backends/redis/scripts.hpp"

#include <algorithm>

namespace zklock::detail::redis {

void redis_backend::tick() {
    const auto now = clock_type::now();
    if (now >= valid_until_) return lose(make_error_code(errc::session_expired));
    if (!renew_in_flight_) {
        renew_in_flight_ = true;
        on_all(eval(extend_script, token_, std::to_string(ttl_.count())),
               [self = shared_from_this(), gen = hold_gen_, now](std::vector<result> results) {
                   self->renewal_done(gen, now, results);
               });
    }
    schedule_watchdog(renew_failing_ ? ttl_ / 10 : ttl_ / 3);
}

void redis_backend::renewal_done(std::uint64_t gen, clock_type::time_point started, const std::vector<result>& results) {
    renew_in_flight_ = false;
    if (!holding_ || gen != hold_gen_) return;
    switch (redlock::after_renewal(results, ctx_->quorum)) {
    case redlock::renewal::extended: return renewed(started + ttl_ - ctx_->drift);
    case redlock::renewal::lost: return lose(make_error_code(errc::node_deleted));  // a majority no longer holds our token
    case redlock::renewal::retry_sooner:  // unreachable: retry sooner until the lease runs out
        return renewal_failed("its renewal reached no majority of the " + std::to_string(n()) + " server(s)");
    }
}

} // namespace zklock::detail::redis
