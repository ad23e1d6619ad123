#include "backends/redis/redis_backend.hpp"

#include "backends/redis/scripts.hpp"

#include <algorithm>

namespace zklock::detail::redis {

using std::chrono::milliseconds;

void redis_backend::attempt() {
    if (!callback_) return;
    if (round_in_flight_) {
        wake_pending_ = true;
        return;
    }
    retry_timer_.cancel();
    round_in_flight_ = true;
    wake_pending_ = false;
    counter_cells::bump(counters_.attempts);
    const auto token = ctx_->random_token();
    const auto started = clock_type::now();
    on_all(eval(acquire_script, token, std::to_string(ttl_.count())),
           [self = shared_from_this(), op = op_, token, started](std::vector<result> results) {
               self->round_done(op, token, started, results);
           });
}

void redis_backend::round_done(std::uint64_t op, const std::string& token, clock_type::time_point started,
                               const std::vector<result>& results) {
    const auto t = redlock::tally(results);
    const bool active = callback_ && op_ == op;
    if (active && redlock::won(t, ctx_->quorum, redlock::validity(ttl_, clock_type::now() - started, ctx_->drift))) {
        round_in_flight_ = false;
        return grant(token, t.fence, started);
    }
    if (!active) {  // cancelled or timed out meanwhile: take back what was set
        round_in_flight_ = false;
        if (t.undo) release_everywhere(token, nullptr, /*publish=*/false);
        if (callback_) attempt();  // a newer acquire waited for this round
        return;
    }
    if (!t.undo) {
        round_in_flight_ = false;
        return round_failed(t);
    }
    // Too few or too late: delete what was set before deciding, so a failed
    // acquire has left nothing behind when it completes.
    release_everywhere(
        token,
        [self = shared_from_this(), op, t](std::error_code) {
            self->round_in_flight_ = false;
            if (self->callback_ && self->op_ == op) self->round_failed(t);
            else if (self->callback_) self->attempt();
        },
        /*publish=*/false);
}

void redis_backend::round_failed(const redlock::round_tally& t) {
    const bool passed = deadline_ && clock_type::now() >= *deadline_;
    switch (redlock::next_step(t, ctx_->quorum, no_wait_, deadline_.has_value(), passed, ctx_->closed)) {
    case redlock::after_round::fail: return finish(last_error_ = t.first_error, false);
    case redlock::after_round::retry_on_error:
        last_error_ = t.first_error;
        return retry_after(next_backoff());
    case redlock::after_round::give_up: return finish({}, false);
    case redlock::after_round::wait:
    case redlock::after_round::retry_split_vote:
        register_waits();
        if (wake_pending_) return attempt();
        // A split vote (Redlock): everybody retries after a short random delay.
        return retry_after(t.yes > 0 ? ctx_->uniform(milliseconds(5), milliseconds(50)) : next_backoff());
    }
}

redis_backend::clock_type::duration redis_backend::next_backoff() {
    const auto cap = std::min<milliseconds>(backoff_, ttl_);
    backoff_ = std::min(backoff_ * 2, max_backoff);
    return ctx_->uniform(cap / 2, cap);
}

/// `released_token`: the token a release message names, nullptr for a
/// subscription confirmed. With several masters one release sends one
/// message each: it counts as one wake-up.
void redis_backend::wake(const std::string* released_token) {
    if (!callback_) return;
    if (released_token && *released_token != last_release_seen_) {
        last_release_seen_ = *released_token;
        counter_cells::bump(counters_.wakeups);
    }
    attempt();
}

void redis_backend::register_waits() {
    if (registered_) return;
    registered_ = true;
    for (auto& m : ctx_->masters) {
        m.wakeups->add(channel_, id_, [weak = weak_from_this()](const std::string* released_token) {
            if (auto self = weak.lock()) self->wake(released_token);
        });
    }
}

void redis_backend::unregister_waits() {
    if (!registered_) return;
    registered_ = false;
    for (auto& m : ctx_->masters) m.wakeups->remove(channel_, id_);
}

void redis_backend::grant(const std::string& token, long long fence, clock_type::time_point started) {
    fence_ = fence;
    if (n() > 1) on_all(eval(raise_script, std::to_string(fence), "0"), nullptr);  // see RedlockService
    key_lease_backend::grant(token, started + ttl_ - ctx_->drift);
}

} // namespace zklock::detail::redis
