// zklock::session_state and zklock::session_event: what a Session is, and what
// happens to it. Plain values: the sans-io machines read them without Asio.
#pragma once

#include <zklock/export.hpp>

namespace zklock {

/// The state of a Session.
enum class session_state {
    connecting, ///< no session established yet (or a new one after expiry)
    connected,  ///< connected; the session is alive
    suspended,  ///< connection lost; the session may still be alive on the server
    closed,     ///< close() was called or the server refused the session for good
};

/// What happened to a Session; delivered to subscribers in order.
enum class session_event {
    connected,          ///< a (new) session is established; `session_id` is its id
    suspended,          ///< connection lost, the client is reconnecting
    reconnected,        ///< connection re-established within the session timeout: same session
    suspended_too_long, ///< suspended for longer than the negotiated session timeout
    expired,            ///< the server expired the session; a new one is being opened
    closed,             ///< the session was closed
};

ZKLOCK_EXPORT const char* to_string(session_state s) noexcept;
ZKLOCK_EXPORT const char* to_string(session_event e) noexcept;

} // namespace zklock
