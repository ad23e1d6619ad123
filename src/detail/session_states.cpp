#include <zklock/detail/session_states.hpp>

#include <zookeeper.h>

namespace zklock::detail {

client_state_step on_client_state(session_state now, int zoo_state, bool auth_pending) noexcept {
    if (zoo_state == ZOO_CONNECTED_STATE) {
        // With auth, the session is usable once the server has accepted it: until
        // the first auth reply, a refused scheme would close the session right
        // after a "connected".
        return auth_pending ? client_state_step::await_auth : client_state_step::connect;
    }
    if (zoo_state == ZOO_CONNECTING_STATE)
        return now == session_state::connected ? client_state_step::suspend : client_state_step::nothing;
    if (zoo_state == ZOO_EXPIRED_SESSION_STATE) return client_state_step::expire;
    if (zoo_state == ZOO_AUTH_FAILED_STATE) return client_state_step::close_auth_failed;
    return client_state_step::nothing;
}

session_event connected_event(session_state before, std::int64_t old_id, std::int64_t new_id) noexcept {
    return before == session_state::suspended && new_id == old_id ? session_event::reconnected
                                                                  : session_event::connected;
}

} // namespace zklock::detail
