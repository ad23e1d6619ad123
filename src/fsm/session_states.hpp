// What the C client's session events do to a Session, and what a Session's
// events do to an acquire: pure decisions, so the transitions are unit-tested
// without a server (session.cpp acts on the first, the acquire machines on the
// second).
#pragma once

#include <zklock/session_state.hpp>

#include <cstdint>
#include <system_error>

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
client_state_step on_client_state(session_state now, int zoo_state, bool auth_pending) noexcept;

/// What a connection tells the listeners: `reconnected` when the Session was
/// suspended and the server kept its session (`new_id` is `old_id`),
/// `connected` otherwise (a first connection, or a new session after expiry).
session_event connected_event(session_state before, std::int64_t old_id, std::int64_t new_id) noexcept;

/// What a session event does to an acquire's attempt (a lock's place in its
/// queue, or a lock set's in every queue), the same for every queue engine.
struct attempt_reaction {
    enum class step {
        nothing,
        lose,     ///< the hold is lost for `ec`
        requeue,  ///< waiting, and the session expired: the nodes went with it, a new attempt on the new session
        fail,     ///< waiting, and the Session closed: the acquire fails for `ec` (why it closed)
        recheck,  ///< waiting, and the session survived a reconnect: list again what we wait in
    };
    step what = step::nothing;
    std::error_code ec;
};

/// The reaction to `e` of an attempt that is `held` (with `node_gone` when a
/// node of its hold went) or `waiting`; `close_reason`: why a closed session
/// closed; `lose_on_suspension`: SessionOptions::lose_locks_on_suspension.
attempt_reaction on_session_event(session_event e, bool held, bool waiting, bool node_gone,
                                                bool lose_on_suspension, std::error_code close_reason) noexcept;

} // namespace zklock::detail
