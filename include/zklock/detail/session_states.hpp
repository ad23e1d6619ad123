// What the C client's session events do to a Session: pure decisions, so the
// session's transitions are unit-tested without a server (session.cpp acts
// on them: timers, a new handle, closing).
#pragma once

#include <zklock/export.hpp>
#include <zklock/session.hpp>

#include <cstdint>

namespace zklock::detail {

/// The step a session event of the C client (its ZOO_*_STATE) takes.
enum class client_state_step {
    nothing,            ///< no change: "connecting" while not connected, a state zklock does not act on
    await_auth,         ///< connected, with an authentication unanswered: usable once the server accepts it
    connect,            ///< connected (connected_event() says whether it is the session we had)
    suspend,            ///< the connection is lost: suspended, and suspended_too_long a session timeout later
    expire,             ///< the server expired the session: its nodes and owed deletes are gone; a new handle
    close_auth_failed,  ///< the server refused an authentication: every later connection would be refused too
};

/// The step for the C client's `zoo_state` when the Session is `now` and
/// `auth_pending` authentications have no reply yet.
ZKLOCK_EXPORT client_state_step on_client_state(session_state now, int zoo_state, bool auth_pending) noexcept;

/// What a connection tells the listeners: `reconnected` when the Session was
/// suspended and the server kept its session (`new_id` is `old_id`),
/// `connected` otherwise (a first connection, or a new session after expiry).
ZKLOCK_EXPORT session_event connected_event(session_state before, std::int64_t old_id, std::int64_t new_id) noexcept;

} // namespace zklock::detail
