#include <zklock/queue_lock.hpp>

#include "engine/contender.hpp"
#include "fsm/path.hpp"
#include "session/session_impl.hpp"

#include <memory>
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
