#include <zklock/shared_mutex.hpp>

#include "recipes/internal_access.hpp"
#include "fsm/lock_node.hpp"

namespace zklock {

void SharedMutex::on_event(std::function<void(const lock_event&)> callback) {
    auto shared = std::make_shared<std::function<void(const lock_event&)>>(std::move(callback));
    writer_.on_event([shared](const lock_event& e) { (*shared)(e); });
    reader_.on_event([shared](const lock_event& e) {
        auto read_side = e;
        read_side.shared = true;
        (*shared)(read_side);
    });
}

namespace {
detail::queue_rule read_write_rule(detail::node_role role) {
    detail::queue_rule rule;
    rule.read_write = true;
    rule.role = role;
    return rule;
}
} // namespace

SharedMutex::SharedMutex(Session& session, std::string path, MutexOptions options)
    : writer_(detail::internal_access::make_mutex(session, path, options, read_write_rule(detail::node_role::writer))),
      reader_(detail::internal_access::make_mutex(session, std::move(path), std::move(options),
                                                  read_write_rule(detail::node_role::reader))) {}

void SharedMutex::on_lost(std::function<void(std::error_code)> callback) {
    auto shared = std::make_shared<std::function<void(std::error_code)>>(std::move(callback));
    writer_.on_lost([shared](std::error_code ec) { (*shared)(ec); });
    reader_.on_lost([shared](std::error_code ec) { (*shared)(ec); });
}

} // namespace zklock
