#include "backends/memcached/memcached_backend.hpp"

namespace zklock::detail::memcached {
namespace asio = boost::asio;

memcached_backend::memcached_backend(std::shared_ptr<memcached_context> ctx, std::string key)
    : ctx_(std::move(ctx)), key_(std::move(key)), id_(ctx_->next_id++), ttl_(ctx_->options.ttl),
      ttl_s_(ttl_seconds(ttl_)), deadline_timer_(ctx_->io()), retry_timer_(ctx_->io()), watchdog_timer_(ctx_->io()),
      losses_(detail::loss_reports::make([c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); }, ctx_->executor)) {}

memcached_backend::~memcached_backend() {
    std::lock_guard lk(ctx_->closers_mutex);
    ctx_->closers.erase(id_);
}

void memcached_backend::acquire(std::optional<clock_type::time_point> deadline, bool no_wait,
                                asio::cancellation_slot slot, acquire_callback callback) {
    const auto post = [c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); };
    const std::uint64_t op = begin_acquire(shared_from_this(), &memcached_backend::gate_, post, slot, callback,
                                           [](memcached_backend& b) { b.give_up(operation_aborted()); });
    if (op == 0) return;
    ctx_->post([self = shared_from_this(), op, deadline, no_wait, cb = std::move(callback)]() mutable {
        self->start(op, deadline, no_wait, std::move(cb));
    });
}

std::error_code memcached_backend::release(std::function<void(std::error_code)> done) {
    if (!gate_.release()) return make_error_code(errc::not_held);
    ctx_->post([self = shared_from_this(), done = std::move(done)] {
        if (!self->holding_) {  // lost in between: that was reported
            if (done) done({});
            return;
        }
        self->end_hold();
        const auto ec = self->delete_if_ours(self->owner_);
        if (done) done(ec);
        self->losses_->end_waits({});
    });
    return {};
}

void memcached_backend::shutdown() noexcept {
    try {
        ctx_->post([self = shared_from_this()] {
            self->give_up(operation_aborted());
            if (self->holding_) {
                self->gate_.end_hold();
                self->end_hold();
                self->delete_if_ours(self->owner_);
            }
            self->losses_->end_waits(operation_aborted());
            self->losses_->forget_callbacks();
        });
    } catch (...) {
    }
}

void memcached_backend::wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) {
    losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->holding_; });
}

std::string memcached_backend::failure_detail() const {
    std::lock_guard lk(detail_mutex_);
    return failure_detail_;
}

void memcached_backend::register_closer() {
    std::lock_guard lk(ctx_->closers_mutex);
    ctx_->closers[id_] = [weak = weak_from_this()] {
        if (auto self = weak.lock()) self->close_for_service();
    };
}

void memcached_backend::close_for_service() {
    give_up(make_error_code(errc::session_closed));
    if (!holding_) return;
    gate_.end_hold();
    end_hold();
    delete_if_ours(owner_);
    losses_->lost(make_error_code(errc::session_closed));
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
