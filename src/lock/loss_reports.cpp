#include "lock/loss_reports.hpp"

#include "support/async_support.hpp"

#include <zklock/error.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>

namespace zklock::detail {

std::shared_ptr<loss_reports> loss_reports::make(post_function post, boost::asio::any_io_executor user) {
    return std::make_shared<loss_reports>(std::move(post), std::move(user));
}

loss_reports::loss_reports(post_function post, boost::asio::any_io_executor user)
    : post_(std::move(post)), user_(std::move(user)) {}

void loss_reports::add_callback(report callback) {
    std::lock_guard lk(callbacks_mutex_);
    callbacks_.push_back(std::make_shared<report>(std::move(callback)));
}

void loss_reports::wait(boost::asio::cancellation_slot slot, report waiter, std::function<bool()> held) {
    const auto id = next_id_.fetch_add(1);
    if (slot.is_connected()) {
        slot.assign([weak = weak_from_this(), id](boost::asio::cancellation_type) {
            if (auto self = weak.lock()) self->post_([self, id] { self->finish(id, operation_aborted()); });
        });
    }
    post_([self = shared_from_this(), id, w = std::move(waiter), held = std::move(held)]() mutable {
        self->waiters_.emplace_back(id, std::move(w));
        if (!held()) self->finish(id, make_error_code(errc::not_held));
    });
}

void loss_reports::lost(std::error_code why) {
    std::vector<std::shared_ptr<report>> callbacks;
    {
        std::lock_guard lk(callbacks_mutex_);
        callbacks = callbacks_;
    }
    for (auto& cb : callbacks) boost::asio::post(user_, [cb, why] { (*cb)(why); });
    end_waits(why);
}

void loss_reports::end_waits(std::error_code ec) {
    auto waiters = std::move(waiters_);
    waiters_.clear();
    for (auto& [id, w] : waiters) w(ec);
}

void loss_reports::forget_callbacks() {
    std::lock_guard lk(callbacks_mutex_);
    callbacks_.clear();
}

void loss_reports::finish(std::uint64_t id, std::error_code ec) {
    const auto it = std::find_if(waiters_.begin(), waiters_.end(), [id](const auto& w) { return w.first == id; });
    if (it == waiters_.end()) return;
    auto w = std::move(it->second);
    waiters_.erase(it);
    w(ec);
}

} // namespace zklock::detail
