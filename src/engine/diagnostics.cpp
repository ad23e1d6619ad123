#include <zklock/diagnostics.hpp>

#include "engine/contender.hpp"
#include "engine/engine_access.hpp"
#include "session/session_access.hpp"
#include "session/session_impl.hpp"

#include <future>
#include <memory>

namespace zklock {

namespace {

// Runs `read` on the strand of `impl` and waits for its text at most `timeout`.
std::string on_strand(const std::shared_ptr<detail::session_impl>& impl, std::function<std::string()> read,
                      std::chrono::milliseconds timeout) {
    if (impl->state() == session_state::closed) return "session closed";
    auto p = std::make_shared<std::promise<std::string>>();
    auto f = p->get_future();
    impl->post([p, read = std::move(read)] { p->set_value(read()); });
    if (f.wait_for(timeout) != std::future_status::ready)
        return "the session's strand is busy (a handler has held it for " + std::to_string(timeout.count()) + " ms)";
    return f.get();
}

}  // namespace

std::string describe_internals(const Session& session, std::chrono::milliseconds timeout) {
    auto impl = detail::session_access::session(session);
    return on_strand(impl, [impl] { return impl->describe(); }, timeout);
}

std::string describe_internals(const QueueLock& lock, std::chrono::milliseconds timeout) {
    auto engine = detail::engine_access::engine(lock);
    return on_strand(engine->session(), [engine] { return engine->describe(); }, timeout);
}

}  // namespace zklock
