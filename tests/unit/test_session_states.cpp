// The session's transitions (detail/session_states.hpp), without a server.
#include <zklock/detail/session_states.hpp>

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
