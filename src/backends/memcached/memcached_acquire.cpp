#include "backends/memcached/memcached_backend.hpp"

#include <algorithm>

namespace zklock::detail::memcached {

using std::chrono::milliseconds;

void memcached_backend::start(std::uint64_t op, std::optional<clock_type::time_point> deadline, bool no_wait,
                              acquire_callback cb) {
    callback_ = std::move(cb);
    op_ = op;
    deadline_ = deadline;
    no_wait_ = no_wait;
    backoff_ = first_poll;
    last_error_ = {};
    if (ctx_->closed) return finish(make_error_code(errc::session_closed), false);
    if (deadline_) {
        deadline_timer_.expires_at(*deadline_);
        deadline_timer_.async_wait([self = shared_from_this(), op](boost::system::error_code ec) {
            if (!ec && self->op_ == op) self->give_up(self->last_error_);
        });
    }
    attempt();
}

void memcached_backend::attempt() {
    if (!callback_) return;
    counter_cells::bump(counters_.attempts);
    const auto owner = ctx_->random_owner();
    const auto started = clock_type::now();
    auto added = ctx_->client.add(key_, owner, ttl_s_);
    if (added.a == answer::failed && added.error == make_error_code(errc::connection_loss)) {
        // The add may have been stored before the connection failed: take it
        // back, so that a failed acquire leaves nothing behind.
        delete_if_ours(owner);
    }
    const bool passed = deadline_ && clock_type::now() >= *deadline_;
    switch (next_after_add(added.a, no_wait_, deadline_.has_value(), passed, ctx_->closed)) {
    case after_add::grant: return grant(owner, started);
    case after_add::fail: return finish(last_error_ = added.error, false);
    case after_add::give_up: return finish({}, false);
    case after_add::retry_on_error: {
        last_error_ = added.error;
        const auto cap = poll_cap(backoff_, ttl_);
        backoff_ = next_backoff(backoff_);
        return retry_after(ctx_->uniform(cap / 2, cap));
    }
    case after_add::poll: {
        const auto cap = poll_cap(backoff_, ttl_);
        backoff_ = next_backoff(backoff_);
        return retry_after(ctx_->uniform(cap / 2, cap));
    }
    }
}

void memcached_backend::retry_after(clock_type::duration delay) {
    if (deadline_) delay = std::min(delay, std::max(clock_type::duration::zero(), *deadline_ - clock_type::now()));
    retry_timer_.expires_after(delay);
    retry_timer_.async_wait([self = shared_from_this(), op = op_](boost::system::error_code ec) {
        if (!ec && self->op_ == op) {
            counter_cells::bump(self->counters_.timer_retries);
            self->attempt();
        }
    });
}

void memcached_backend::grant(const std::string& owner, clock_type::time_point started) {
    owner_ = owner;
    holding_ = true;
    ++hold_gen_;
    valid_until_ = started + lease_validity(ttl_);
    renew_failing_ = false;
    counter_cells::bump(counters_.acquisitions);
    finish({}, true);
    schedule_watchdog(ttl_ / 3);
}

void memcached_backend::finish(std::error_code ec, bool acquired) {
    deadline_timer_.cancel();
    retry_timer_.cancel();
    op_ = 0;
    {
        std::lock_guard lk(detail_mutex_);
        failure_detail_ = ec ? "memcached at " + ctx_->client.endpoint() + ": " + ec.message() : std::string();
    }
    if (auto cb = std::exchange(callback_, nullptr)) {
        gate_.end(acquired);
        cb(ec, acquired);
    }
}

void memcached_backend::give_up(std::error_code ec) {
    if (callback_) finish(ec, false);
}

} // namespace zklock::detail::memcached
