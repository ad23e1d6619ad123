#include "backends/memcached/memcached_backend.hpp"

namespace zklock::detail::memcached {

void memcached_backend::attempt() {
    if (!callback_) return;
    counter_cells::bump(counters_.attempts);
    const auto owner = ctx_->random_token();
    const auto started = clock_type::now();
    auto added = ctx_->client.add(key_, owner, ttl_s_);
    if (added.a == answer::failed && added.error == make_error_code(errc::connection_loss)) {
        // The add may have been stored before the connection failed: take it
        // back, so that a failed acquire leaves nothing behind.
        delete_if_ours(owner);
    }
    const bool passed = deadline_ && clock_type::now() >= *deadline_;
    switch (next_after_add(added.a, no_wait_, deadline_.has_value(), passed, ctx_->closed)) {
    case after_add::grant: return grant(owner, started + lease_validity(ttl_));
    case after_add::fail: return finish(last_error_ = added.error, false);
    case after_add::give_up: return finish({}, false);
    case after_add::retry_on_error:
        last_error_ = added.error;
        return poll_again();
    case after_add::poll: return poll_again();
    }
}

void memcached_backend::poll_again() {
    const auto cap = poll_cap(backoff_, ttl_);
    backoff_ = next_backoff(backoff_);
    retry_after(ctx_->uniform(cap / 2, cap));
}

void memcached_backend::acquire_ended(std::error_code ec) {
    std::lock_guard lk(detail_mutex_);
    failure_detail_ = ec ? "memcached at " + ctx_->client.endpoint() + ": " + ec.message() : std::string();
}

} // namespace zklock::detail::memcached
