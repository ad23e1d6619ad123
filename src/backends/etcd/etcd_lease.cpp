#include "backends/etcd/etcd_backend.hpp"

#include <algorithm>
#include <utility>

namespace zklock::detail::etcd {

namespace {

std::int64_t ns_of(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

} // namespace

void etcd_backend::ensure_lease(std::function<void(std::error_code)> then) {
    if (lease_ != 0 && !clock_.lost(clock_type::now())) return then({});
    if (lease_ != 0) drop_lease();  // ran out while idle
    lease_waiters_.push_back(std::move(then));
    if (granting_) return;
    granting_ = true;
    etcdserverpb::LeaseGrantRequest req;
    req.set_ttl(ttl_s_);
    const auto sent = clock_type::now();
    ctx_->call(rpc::lease_grant,
        std::move(req), [self = shared_from_this(), sent](std::error_code ec, etcdserverpb::LeaseGrantResponse& r) {
            self->granting_ = false;
            if (!ec && !r.error().empty()) ec = make_error_code(errc::system_error);
            if (!ec && self->ctx_->closed) {  // the service ended meanwhile: give it back
                self->lease_ = r.id();
                self->drop_lease();
                ec = make_error_code(errc::session_closed);
            }
            if (!ec) {
                self->lease_ = r.id();
                self->clock_ = lease_clock{};
                self->clock_.answered(sent, r.ttl());
                self->key_ = contender_key(self->prefix_, self->lease_);
                self->ctx_->listen_lease(self->lease_, [weak = self->weak_from_this()](clock_type::time_point at,
                                                                                       std::int64_t ttl) {
                    if (auto s = weak.lock()) s->lease_answered(at, ttl);
                });
                self->schedule_keepalive();
            }
            auto waiters = std::exchange(self->lease_waiters_, {});
            for (auto& w : waiters) w(ec);
        });
}

void etcd_backend::lease_answered(clock_type::time_point sent, std::int64_t ttl) {
    clock_.answered(sent, ttl);
    if (clock_.gone) return lease_lost(make_error_code(errc::session_expired));
    if (holding_) safe_until_ns_ = ns_of(*clock_.valid_until);
}

void etcd_backend::schedule_keepalive() {
    if (lease_ == 0) return;
    const auto now = clock_type::now();
    auto delay = clock_type::duration(keepalive_period(std::chrono::seconds(ttl_s_)));
    // Wake at the lease's end at the latest, to tell a loss then.
    if (clock_.valid_until) delay = std::min(delay, std::max(clock_type::duration::zero(), *clock_.valid_until - now));
    keepalive_timer_.expires_after(delay);
    keepalive_timer_.async_wait([self = shared_from_this(), lease = lease_](boost::system::error_code ec) {
        if (ec || self->lease_ != lease) return;
        if (self->clock_.lost(clock_type::now())) return self->lease_lost(make_error_code(errc::session_expired));
        // Send when the period is up; a wake-up at the lease's end that finds
        // it extended only reschedules.
        self->ctx_->keepalive(lease);
        self->schedule_keepalive();
    });
}

void etcd_backend::lease_lost(std::error_code why) {
    if (lease_ == 0) return;
    ctx_->log(log_level::warn, "lease " + key_.substr(prefix_.size()) + " of " + prefix_ + " lost: " +
                                   (clock_.gone ? "etcd says it no longer exists"
                                                : "no keepalive answered within its ttl"));
    drop_lease();
    if (holding_) lose(why);
    else if (callback_) give_up(why);
}

void etcd_backend::drop_lease() {
    keepalive_timer_.cancel();
    if (watch_id_ != 0) {
        ctx_->unwatch(watch_id_);
        watch_id_ = 0;
    }
    if (lease_ == 0) return;
    const auto lease = std::exchange(lease_, 0);
    ctx_->forget_lease(lease);
    key_may_exist_ = false;  // the revoke deletes it; if the revoke is lost, the lease runs out
    clock_ = lease_clock{};
    etcdserverpb::LeaseRevokeRequest req;
    req.set_id(lease);
    ctx_->call(rpc::lease_revoke,
        std::move(req), [c = ctx_, lease](std::error_code ec, etcdserverpb::LeaseRevokeResponse&) {
            if (ec && ec != make_error_code(errc::session_expired))
                c->log(log_level::warn, "revoking lease " + std::to_string(lease) + " failed (" + ec.message() +
                                            "): it runs out at its ttl");
        });
}

void etcd_backend::end_hold() {
    holding_ = false;
    fence_ = 0;
    safe_until_ns_ = 0;
}

void etcd_backend::lose(std::error_code why) {
    if (!holding_) return;
    ctx_->log(log_level::error, "lock " + prefix_ + " lost: " + why.message());
    gate_.end_hold();
    end_hold();
    drop_lease();
    losses_->lost(why);
}

} // namespace zklock::detail::etcd
