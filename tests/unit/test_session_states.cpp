// The session's transitions (src/fsm/session_states.hpp), without a server.
#include "fsm/session_states.hpp"

#include <zklock/error.hpp>

#include <gtest/gtest.h>

#include <zookeeper.h>

using namespace zklock;
using namespace zklock::detail;

TEST(SessionStates, AConnectionIsUsableOnlyOnceEveryAuthenticationIsAnswered) {
    EXPECT_EQ(on_client_state(session_state::connecting, ZOO_CONNECTED_STATE, true), client_state_step::await_auth);
    EXPECT_EQ(on_client_state(session_state::connecting, ZOO_CONNECTED_STATE, false), client_state_step::connect);
    EXPECT_EQ(on_client_state(session_state::suspended, ZOO_CONNECTED_STATE, false), client_state_step::connect);
}

TEST(SessionStates, OnlyAConnectedSessionIsSuspendedByALostConnection) {
    EXPECT_EQ(on_client_state(session_state::connected, ZOO_CONNECTING_STATE, false), client_state_step::suspend);
    // Still connecting, or already suspended: no second "suspended".
    EXPECT_EQ(on_client_state(session_state::connecting, ZOO_CONNECTING_STATE, false), client_state_step::nothing);
    EXPECT_EQ(on_client_state(session_state::suspended, ZOO_CONNECTING_STATE, false), client_state_step::nothing);
}

TEST(SessionStates, ExpiryAndARefusedAuthenticationAreTakenInEveryState) {
    for (const auto now : {session_state::connecting, session_state::connected, session_state::suspended}) {
        EXPECT_EQ(on_client_state(now, ZOO_EXPIRED_SESSION_STATE, false), client_state_step::expire);
        EXPECT_EQ(on_client_state(now, ZOO_AUTH_FAILED_STATE, true), client_state_step::close_auth_failed);
    }
    EXPECT_EQ(on_client_state(session_state::connected, ZOO_ASSOCIATING_STATE, false), client_state_step::nothing);
}

TEST(SessionStates, AReconnectIsTheSameSessionAfterASuspension) {
    EXPECT_EQ(connected_event(session_state::suspended, 0x42, 0x42), session_event::reconnected);
    // A new id after a suspension: the old session expired while we were away.
    EXPECT_EQ(connected_event(session_state::suspended, 0x42, 0x43), session_event::connected);
    // The first connection, and the new session after an expiry.
    EXPECT_EQ(connected_event(session_state::connecting, 0, 0x42), session_event::connected);
    EXPECT_EQ(connected_event(session_state::connecting, 0x42, 0x42), session_event::connected);
}

// ---- what a session event does to an acquire's attempt ---------------------------------

namespace {
attempt_reaction::step step_of(session_event e, bool held, bool waiting, bool node_gone = false,
                               bool lose_on_suspension = false) {
    return on_session_event(e, held, waiting, node_gone, lose_on_suspension, {}).what;
}
} // namespace

TEST(SessionStates, ExpiryLosesAHoldAndQueuesAWaiterAgain) {
    using step = attempt_reaction::step;
    const auto r = on_session_event(session_event::expired, true, false, false, false, {});
    EXPECT_EQ(r.what, step::lose);
    EXPECT_EQ(r.ec, errc::session_expired);
    EXPECT_EQ(step_of(session_event::expired, false, true), step::requeue);
    EXPECT_EQ(step_of(session_event::expired, false, false), step::nothing);  // cancelled or over
}

TEST(SessionStates, ACloseLosesAHoldAndFailsAWaiterWithItsReason) {
    using step = attempt_reaction::step;
    EXPECT_EQ(on_session_event(session_event::closed, true, false, false, false, {}).ec, errc::session_closed);
    const auto r = on_session_event(session_event::closed, false, true, false, false, make_error_code(errc::auth_failed));
    EXPECT_EQ(r.what, step::fail);
    EXPECT_EQ(r.ec, errc::auth_failed);
}

TEST(SessionStates, ASuspensionLosesAHoldOnlyWhenTheSessionSaysSo) {
    using step = attempt_reaction::step;
    EXPECT_EQ(step_of(session_event::suspended_too_long, true, false), step::nothing);
    const auto r = on_session_event(session_event::suspended_too_long, true, false, false, true, {});
    EXPECT_EQ(r.what, step::lose);
    EXPECT_EQ(r.ec, errc::connection_suspended);
    EXPECT_EQ(step_of(session_event::suspended_too_long, false, true, false, true), step::nothing);
    EXPECT_EQ(step_of(session_event::suspended, true, false, false, true), step::nothing);
}

TEST(SessionStates, AReconnectMeansSomeoneElseDeletedANodeThatWentAndRechecksAWaiter) {
    using step = attempt_reaction::step;
    const auto r = on_session_event(session_event::reconnected, true, false, true, false, {});
    EXPECT_EQ(r.what, step::lose);
    EXPECT_EQ(r.ec, errc::node_deleted);
    EXPECT_EQ(step_of(session_event::reconnected, true, false), step::nothing);
    EXPECT_EQ(step_of(session_event::reconnected, false, true), step::recheck);
    EXPECT_EQ(step_of(session_event::connected, false, true), step::nothing);
}
