#include "backends/redis/redis_backend.hpp"

#include "backends/redis/scripts.hpp"

namespace zklock::detail::redis {
namespace asio = boost::asio;

namespace {

using result = redlock::master_reply;

/// A script's integer reply: > 0 yes, 0 no; anything else failed.
result classify(std::error_code ec, const reply& r) {
    if (ec) return {result::kind::failed, 0, ec};
    if (r.type == reply::kind::integer) return {r.integer > 0 ? result::kind::yes : result::kind::no, r.integer, {}};
    return {result::kind::failed, 0, std::make_error_code(std::errc::protocol_error)};
}

} // namespace

redis_backend::redis_backend(std::shared_ptr<redis_context> ctx, std::string key)
    : ctx_(std::move(ctx)), key_(std::move(key)), fence_key_(key_ + ":fence"), channel_(key_ + ":released"),
      id_(ctx_->next_id++), ttl_(ctx_->options.ttl), deadline_timer_(ctx_->strand), retry_timer_(ctx_->strand),
      watchdog_timer_(ctx_->strand),
      losses_(detail::loss_reports::make([c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); }, ctx_->executor)) {}

void redis_backend::acquire(std::optional<clock_type::time_point> deadline, bool no_wait, asio::cancellation_slot slot,
                            acquire_callback callback) {
    const auto post = [c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); };
    const std::uint64_t op = begin_acquire(shared_from_this(), &redis_backend::gate_, post, slot, callback,
                                           [](redis_backend& b) { b.give_up(operation_aborted()); });
    if (op == 0) return;
    ctx_->post([self = shared_from_this(), op, deadline, no_wait, cb = std::move(callback)]() mutable {
        self->start(op, deadline, no_wait, std::move(cb));
    });
}

std::error_code redis_backend::release(std::function<void(std::error_code)> done) {
    if (!gate_.release()) return make_error_code(errc::not_held);
    ctx_->post([self = shared_from_this(), done = std::move(done)] {
        if (!self->holding_) {  // lost in between: that was reported
            if (done) done({});
            return;
        }
        self->end_hold();
        self->release_everywhere(self->token_, [done](std::error_code ec) {
            if (done) done(ec);
        });
        self->losses_->end_waits({});
    });
    return {};
}

void redis_backend::shutdown() noexcept {
    try {
        ctx_->post([self = shared_from_this()] {
            self->give_up(operation_aborted());
            if (self->holding_) {
                self->gate_.end_hold();
                self->end_hold();
                self->release_everywhere(self->token_, nullptr);
            }
            self->losses_->end_waits(operation_aborted());
            self->losses_->forget_callbacks();
        });
    } catch (...) {
    }
}

void redis_backend::wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) {
    losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->holding_; });
}

redis_backend::~redis_backend() {
    std::lock_guard lk(ctx_->closers_mutex);
    ctx_->closers.erase(id_);
}

void redis_backend::register_closer() {
    std::lock_guard lk(ctx_->closers_mutex);
    ctx_->closers[id_] = [weak = weak_from_this()] {
        if (auto self = weak.lock()) self->close_for_service();
    };
}

void redis_backend::close_for_service() {
    give_up(make_error_code(errc::session_closed));
    if (!holding_) return;
    gate_.end_hold();
    end_hold();
    release_everywhere(token_, nullptr);
    losses_->lost(make_error_code(errc::session_closed));
}

std::vector<std::string> redis_backend::eval(const char* script, std::string arg1, std::string arg2) const {
    return {"EVAL", script, "2", key_, script == acquire_script || script == raise_script ? fence_key_ : channel_,
            std::move(arg1), std::move(arg2)};
}

void redis_backend::on_all(std::vector<std::string> cmd, std::function<void(std::vector<result>)> done) {
    struct gather {
        std::vector<result> results;
        std::size_t left;
        std::function<void(std::vector<result>)> done;
    };
    if (ctx_->closed) {  // at once: after the service's end nothing may wait on its strand
        if (done) done(std::vector<result>(n(), result{result::kind::failed, 0, make_error_code(errc::session_closed)}));
        return;
    }
    auto g = std::make_shared<gather>(gather{std::vector<result>(n()), n(), std::move(done)});
    for (std::size_t i = 0; i < n(); ++i) {
        ctx_->masters[i].commands->command(cmd, [g, i](std::error_code ec, reply r) {
            g->results[i] = classify(ec, r);
            if (--g->left == 0 && g->done) g->done(std::move(g->results));
        });
    }
}

void redis_backend::release_everywhere(const std::string& token, std::function<void(std::error_code)> done,
                                       bool publish) {
    on_all(eval(release_script, token, publish ? "1" : "0"), [done = std::move(done)](std::vector<result> results) {
        if (done) done(redlock::after_release(results));
    });
}

} // namespace zklock::detail::redis
