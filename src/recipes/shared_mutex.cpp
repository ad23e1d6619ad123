#include <zklock/shared_mutex.hpp>

#include "fsm/lock_node.hpp"
#include "fsm/node_form.hpp"
#include "session/session_access.hpp"
#include "recipes/queue_factory.hpp"

#include <memory>
#include <utility>

namespace zklock {

namespace {

// One side of the lock: a place in the one queue under the read-write rule.
QueueLock side(Session& session, std::string path, MutexOptions options, detail::node_role role,
               std::error_code* ec) {
    detail::queue_rule rule;
    rule.read_write = true;
    rule.role = role;
    return detail::make_queue_lock(detail::session_access::session(session),
                                   detail::request_of(std::move(path), std::move(options), std::move(rule)), ec);
}

} // namespace

SharedMutex::SharedMutex(Session& session, std::string path, MutexOptions options, std::error_code* ec)
    : writer_(side(session, path, options, detail::node_role::writer, ec)),
      reader_(side(session, std::move(path), std::move(options), detail::node_role::reader, ec)) {}

SharedMutex::SharedMutex(Session& session, std::string path, MutexOptions options)
    : SharedMutex(session, std::move(path), std::move(options), nullptr) {}

SharedMutex::SharedMutex(Session& session, std::string path, MutexOptions options, std::error_code& ec)
    : SharedMutex(session, std::move(path), std::move(options), &ec) {}

void SharedMutex::on_event(std::function<void(const lock_event&)> callback) {
    auto shared = std::make_shared<std::function<void(const lock_event&)>>(std::move(callback));
    writer_.on_event([shared](const lock_event& e) { (*shared)(e); });
    reader_.on_event([shared](const lock_event& e) {
        auto read_side = e;
        read_side.shared = true;
        (*shared)(read_side);
    });
}

} // namespace zklock
