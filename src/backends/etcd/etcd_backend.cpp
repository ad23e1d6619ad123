#include "backends/etcd/etcd_backend.hpp"

#include "support/async_support.hpp"

#include <mutex>
#include <utility>

namespace zklock::detail::etcd {

etcd_backend::etcd_backend(std::shared_ptr<etcd_context> ctx, std::string prefix)
    : ctx_(std::move(ctx)), prefix_(std::move(prefix)), id_(ctx_->next_id++),
      ttl_s_((ctx_->options.ttl.count() + 999) / 1000), deadline_timer_(ctx_->own->ioc),
      retry_timer_(ctx_->own->ioc), keepalive_timer_(ctx_->own->ioc),
      losses_(loss_reports::make([c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); }, ctx_->executor)) {}

etcd_backend::~etcd_backend() {
    std::lock_guard lk(ctx_->closers_mutex);
    ctx_->closers.erase(id_);
}

void etcd_backend::register_closer() {
    std::lock_guard lk(ctx_->closers_mutex);
    ctx_->closers[id_] = [weak = weak_from_this()] {
        if (auto self = weak.lock()) self->close_for_service();
    };
}

void etcd_backend::acquire(std::optional<clock_type::time_point> deadline, bool no_wait,
                           boost::asio::cancellation_slot slot, acquire_callback callback) {
    const auto post = [c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); };
    const std::uint64_t op = begin_acquire<etcd_backend>(shared_from_this(), &etcd_backend::gate_, post, slot, callback,
                                                         [](etcd_backend& b) { b.give_up(operation_aborted()); });
    if (op == 0) return;
    ctx_->post([self = shared_from_this(), op, deadline, no_wait, cb = std::move(callback)]() mutable {
        self->start(op, deadline, no_wait, std::move(cb));
    });
}

std::error_code etcd_backend::release(std::function<void(std::error_code)> done) {
    if (!gate_.release()) return make_error_code(errc::not_held);
    ctx_->post([self = shared_from_this(), done = std::move(done)]() mutable {
        if (!self->holding_) {  // lost in between: that was reported
            if (done) done({});
            return;
        }
        self->end_hold();
        self->losses_->end_waits({});
        // Delete our key (the lease stays for the next acquire).
        self->key_may_exist_ = true;
        self->delete_in_flight_ = true;
        etcdserverpb::DeleteRangeRequest req;
        req.set_key(self->key_);
        self->ctx_->call(rpc::delete_range,
            std::move(req), [self, done = std::move(done)](std::error_code ec, etcdserverpb::DeleteRangeResponse& r) {
                self->delete_in_flight_ = false;
                if (!ec) {
                    self->key_may_exist_ = false;
                    if (r.deleted() == 0) ec = make_error_code(errc::node_deleted);
                } else {
                    self->ctx_->log(log_level::warn, "releasing " + self->key_ + " failed (" + ec.message() +
                                                         "): revoking its lease");
                    self->drop_lease();
                }
                if (done) done(ec);
                if (self->attempt_pending_) self->attempt();
            });
    });
    return {};
}

void etcd_backend::shutdown() noexcept {
    try {
        ctx_->post([self = shared_from_this()] {
            self->give_up(operation_aborted());
            if (self->holding_) {
                self->gate_.end_hold();
                self->end_hold();
            }
            self->drop_lease();
            self->losses_->end_waits(operation_aborted());
            self->losses_->forget_callbacks();
        });
    } catch (...) {
    }
}

void etcd_backend::wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) {
    losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->holding_; });
}

std::optional<etcd_backend::clock_type::time_point> etcd_backend::safe_until() const noexcept {
    return clock_type::time_point(std::chrono::nanoseconds(safe_until_ns_.load()));
}

void etcd_backend::close_for_service() {
    give_up(make_error_code(errc::session_closed));
    const bool was_holding = holding_;
    if (holding_) {
        gate_.end_hold();
        end_hold();
    }
    drop_lease();
    if (was_holding) losses_->lost(make_error_code(errc::session_closed));
}

} // namespace zklock::detail::etcd
