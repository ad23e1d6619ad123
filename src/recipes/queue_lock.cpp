#include <zklock/queue_lock.hpp>

#include "engine/contender.hpp"
#include "lock/lock_frontend.hpp"
#include "fsm/path.hpp"
#include "session/session_impl.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace zklock {

QueueLock::QueueLock(std::shared_ptr<detail::contender_engine> engine, std::string path)
    : Lock(engine, std::move(path)), engine_(std::move(engine)) {}

void QueueLock::on_queue_position(std::function<void(std::size_t)> callback) {
    engine_->on_user_position(std::move(callback));
}

void QueueLock::on_event(std::function<void(const lock_event&)> callback) { engine_->on_user_event(std::move(callback)); }
std::string QueueLock::node_path() const { return engine_->node_path(); }
std::optional<std::size_t> QueueLock::queue_position() const noexcept { return engine_->queue_position(); }

namespace {
detail::acquire_start requeue_start(const std::shared_ptr<detail::contender_engine>& engine) {
    return [engine](std::optional<detail::time_point> deadline, bool no_wait, boost::asio::cancellation_slot slot,
                    LockBackend::acquire_callback done) { engine->requeue(deadline, no_wait, slot, std::move(done)); };
}
} // namespace

bool QueueLock::requeue_blocking(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec) {
    return detail::acquire_blocking(*engine_, requeue_start(engine_), deadline, ec);
}

void QueueLock::requeue(std::error_code& ec) { requeue_blocking(std::nullopt, ec); }

void QueueLock::requeue() {
    std::error_code ec;
    requeue(ec);
    throw_requeue_failure(ec, "requeue");
}

void QueueLock::throw_requeue_failure(const std::error_code& ec, const char* op) const {
    if (!ec) return;
    const auto detail = engine_->failure_detail();
    throw error(ec, std::string("zklock::QueueLock::") + op + " " + path() +
                        (detail.empty() ? std::string() : " (" + detail + ")"));
}

void QueueLock::async_requeue_impl(boost::asio::any_completion_handler<void(std::error_code)> handler) {
    detail::async_lock(*engine_, requeue_start(engine_), std::move(handler));
}

void QueueLock::async_try_requeue_impl(std::optional<std::chrono::steady_clock::time_point> deadline,
                                       boost::asio::any_completion_handler<void(std::error_code, bool)> handler) {
    detail::async_acquire(*engine_, requeue_start(engine_), deadline, std::move(handler));
}

std::vector<contender> QueueLock::contenders(std::error_code& ec) const {
    if (const auto check = detail::validate_lock_path(path()); !check) {
        ec = check.error;
        return {};
    }
    return detail::list_contenders(engine_->session(), path(), ec);
}

std::vector<contender> QueueLock::contenders() const {
    std::error_code ec;
    auto out = contenders(ec);
    throw_if(ec, "zklock::QueueLock::contenders " + path());
    return out;
}

} // namespace zklock
