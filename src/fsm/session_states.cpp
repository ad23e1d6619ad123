#include "fsm/session_states.hpp"

#include <zklock/error.hpp>

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

attempt_reaction on_session_event(session_event e, bool held, bool waiting, bool node_gone,
                                  bool lose_on_suspension, std::error_code close_reason) noexcept {
    using step = attempt_reaction::step;
    const auto lose = [](errc why) { return attempt_reaction{step::lose, make_error_code(why)}; };
    switch (e) {
    case session_event::expired:
        if (held) return lose(errc::session_expired);
        if (waiting) return {step::requeue, {}};
        break;
    case session_event::suspended_too_long:
        if (held && lose_on_suspension) return lose(errc::connection_suspended);
        break;
    case session_event::closed:
        if (held) return lose(errc::session_closed);
        if (waiting) return {step::fail, close_reason};  // auth_failed or session_closed
        break;
    case session_event::reconnected:
        // The session survived: a node of ours that went was deleted by someone else.
        if (held && node_gone) return lose(errc::node_deleted);
        // Watches survive a reconnect, but a re-check costs one listing and
        // covers a deletion the old connection never delivered.
        if (waiting) return {step::recheck, {}};
        break;
    case session_event::connected:
    case session_event::suspended:
        break;
    }
    return {};
}

} // namespace zklock::detail
