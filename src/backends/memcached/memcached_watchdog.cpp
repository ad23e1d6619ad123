#include "backends/memcached/memcached_backend.hpp"

namespace zklock::detail::memcached {

void memcached_backend::tick() {
    const auto started = clock_type::now();
    if (started >= valid_until_) return lose(make_error_code(errc::session_expired));
    auto& c = ctx_->client;
    const auto got = c.gets(key_);
    const auto o = owner_of(got.a, got.value, token_);
    outcome cas;
    if (o == ownership::ours) cas = c.cas(key_, token_, ttl_s_, got.cas);
    switch (after_renew(o, cas.a)) {
    case renewal::extended:
        renewed(started + lease_validity(ttl_));
        return schedule_watchdog(ttl_ / 3);
    case renewal::lost: return lose(make_error_code(errc::node_deleted));
    case renewal::retry_sooner:
        return renewal_failed("its renewal failed (" + (got.error ? got.error : cas.error).message() + ")");
    }
}

} // namespace zklock::detail::memcached
