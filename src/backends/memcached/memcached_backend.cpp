#include "backends/memcached/memcached_backend.hpp"

namespace zklock::detail::memcached {

memcached_backend::memcached_backend(std::shared_ptr<memcached_context> ctx, std::string key)
    : key_lease_backend(ctx, std::move(key), ctx->io().get_executor(), first_poll), ttl_s_(ttl_seconds(ttl_)) {}

std::string memcached_backend::failure_detail() const {
    std::lock_guard lk(detail_mutex_);
    return failure_detail_;
}

void memcached_backend::let_go(const std::function<void(std::error_code)>& done) {
    const auto ec = delete_if_ours(token_);
    if (done) done(ec);
}

std::error_code memcached_backend::delete_if_ours(const std::string& owner) {
    if (ctx_->closed) return make_error_code(errc::session_closed);
    auto& c = ctx_->client;
    const auto got = c.gets(key_);
    const auto o = owner_of(got.a, got.value, owner);
    outcome cas, del;
    if (o == ownership::ours) {
        // Ours at this instant, with a full lease ahead: the delete right
        // behind it cannot meet another owner's key unless ours vanished between.
        cas = c.cas(key_, owner, ttl_s_, got.cas);
        if (cas.a == answer::done) del = c.del(key_);
    }
    const auto failure = got.error ? got.error : cas.error ? cas.error : del.error;
    return after_release(o, cas.a, del.a, failure);
}

} // namespace zklock::detail::memcached
