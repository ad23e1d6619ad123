// The acquire protocol (src/fsm/acquire_machine.hpp) step by step, without a
// server: each test feeds the events a server and a session would give and
// checks the actions the machine asks for, in order.
#include "fsm/acquire_machine.hpp"
#include <zklock/error.hpp>

#include "machine_words.hpp"

#include <gtest/gtest.h>

#include <zookeeper.h>

#include <string>
#include <vector>

using namespace zklock;
using namespace zklock::detail;
using namespace std::chrono_literals;

using namespace machine_words;

namespace {

const std::string ours = "_c_" + guid + "-lock-0000000005";
const std::string ahead = "_c_1b4e28ba-2fa1-11d2-883f-0016d3cca427-lock-0000000004";
const std::string further_ahead = "_c_6fa459ea-ee8a-3ca4-894e-db77e160355e-lock-0000000003";

acquire_setup mutex_setup() {
    acquire_setup s;
    s.dirs = {"/locks/a"};
    s.form = *form_of(node_names::zklock, node_role::lock);
    s.policy = std::make_shared<const policy_words>(policy_words{{}, {}, "digest:alice", {}});
    return s;
}

/// A machine on a connected session `session_a`, with its setup kept alive.
struct fixture {
    explicit fixture(acquire_setup s = mutex_setup()) : setup(std::move(s)), m(setup, guid) {
        m.session = {session_a, true, false};
    }
    /// Connected and created: the node is ours, the pipelined listing is on its way.
    void create() {
        EXPECT_EQ(said(m.begin()), (words{"forget_position", "wait_connected create"}));
        m.connected(acquire_step::create);
        EXPECT_EQ(said(m.created(ZOK, setup.dirs[0] + "/" + ours, stat_of(50, session_a))), (words{"node_known " + ours}));
    }
    /// Created and listed behind `ahead`: watching it.
    void wait_behind_one() {
        create();
        EXPECT_EQ(said(m.listed(listing::pipelined, ZOK, {ahead, ours})),
                  (words{"position #1", "watch_own_node " + ours, "watch_node " + ahead + " #1",
                         "watch_release " + ahead + " #1"}));
    }
    acquire_setup setup;
    acquire_machine m;
};

} // namespace

// ---- the common path ----------------------------------------------------------------

TEST(AcquireMachine, CreatesAndListsInOneRoundTripAndHoldsWhenFirst) {
    fixture f;
    EXPECT_EQ(said(f.m.begin()), (words{"forget_position", "wait_connected create"}));
    EXPECT_EQ(said(f.m.connected(acquire_step::create)),
              (words{"create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), (words{"position", "grant " + ours + " #50"}));
    EXPECT_TRUE(f.m.held());
}

TEST(AcquireMachine, AWaiterWatchesOnlyItsPredecessorAndItsDeletionAloneGrants) {
    fixture f;
    f.create();
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours})),
              (words{"position #2", "watch_own_node " + ours, "watch_node " + ahead + " #1",
                     "watch_release " + ahead + " #1"}));
    EXPECT_EQ(said(f.m.watch_set(ahead, 1, ZOK, stat_of(40, session_b))), words{});
    // Another contender is still ahead (it may hold): the wake-up lists again.
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "count_attempt", "list fresh"}));
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {further_ahead, ours})),
              (words{"position #1", "watch_node " + further_ahead + " #3", "watch_release " + further_ahead + " #3"}));
    // Now the predecessor is the last blocker: its deletion alone grants, without a listing.
    EXPECT_EQ(said(f.m.watch_fired(further_ahead, 3, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "grant " + ours + " #50"}));
}

TEST(AcquireMachine, AStaleWatchOrAnotherEventDoesNotGrant) {
    fixture f;
    f.wait_behind_one();
    EXPECT_EQ(said(f.m.watch_fired(ahead, 0, ZOO_DELETED_EVENT)), words{});  // an earlier round's watch
    EXPECT_EQ(said(f.m.watch_fired(ahead, 0, ZOO_CHANGED_EVENT)), words{});
    // Any other event only re-arms the watch.
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_CHILD_EVENT)), (words{"watch_node " + ahead + " #1"}));
    EXPECT_TRUE(f.m.waiting());
}

TEST(AcquireMachine, APredecessorAlreadyGoneGrantsAtOnce) {
    fixture f;
    f.wait_behind_one();
    EXPECT_EQ(said(f.m.watch_set(ahead, 1, ZNONODE, {})), (words{"grant " + ours + " #50"}));
}

TEST(AcquireMachine, ASemaphoreWaiterThatIsNotNextListsAgainWhenWoken) {
    auto s = mutex_setup();
    s.rule.permits = 2;
    s.rule.dir_data = "permits=2";
    fixture f(s);
    f.m.begin();
    EXPECT_EQ(said(f.m.connected(acquire_step::create)),
              (words{"read_dir_data", "create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
    f.m.dir_data_read(ZOK, "permits=2", 3);
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    const std::string third = "_c_3d813cbb-47fb-32ba-91df-831e1593ac29-lock-0000000002";
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {third, further_ahead, ahead, ours})),
              (words{"position #3", "watch_node " + further_ahead + " #1", "watch_node " + ahead + " #1"}));
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "count_attempt", "list fresh"}));
    // Next but one: the deletion of either grants, without a listing, so its own node is watched too.
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {third, further_ahead, ours})),
              (words{"position #2", "watch_own_node " + ours, "watch_node " + third + " #3",
                     "watch_node " + further_ahead + " #3"}));
}

TEST(AcquireMachine, ATryThatWouldWaitGivesUp) {
    auto s = mutex_setup();
    s.no_wait = true;
    fixture f(s);
    f.create();
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ahead, ours})), (words{"position #1", "give_up"}));
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_node " + ours + " #256 wait"}));
}

TEST(AcquireMachine, TheHerdBaselineListsWithAChildWatchAfterTheCreate) {
    auto s = mutex_setup();
    s.rule.watch_parent = true;
    fixture f(s);
    f.m.begin();
    EXPECT_EQ(said(f.m.connected(acquire_step::create)), (words{"create _c_" + guid + "-lock-"}));
    EXPECT_EQ(said(f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a))),
              (words{"node_known " + ours, "count_attempt", "list fresh watch #1"}));
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {ahead, ours})), (words{"position #1"}));
    EXPECT_EQ(said(f.m.watch_fired({}, 1, ZOO_CHILD_EVENT)),
              (words{"count_wakeup", "count_attempt", "list fresh watch #2"}));
}

TEST(AcquireMachine, ANodeThatIsNotEphemeralAheadFailsInsteadOfWaitingForever) {
    fixture f;
    f.wait_behind_one();
    const auto out = f.m.watch_set(ahead, 1, ZOK, stat_of(40, 0));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].what, acquire_action::kind::fail);
    EXPECT_EQ(out[0].ec, errc::blocked_by_persistent_node);
    EXPECT_NE(out[0].detail.find("/locks/a/" + ahead), std::string::npos);
}

TEST(AcquireMachine, OurNodeDeletedByAnotherBeforeTheGrantQueuesAgain) {
    fixture g;
    g.wait_behind_one();
    EXPECT_EQ(said(g.m.session_changed(session_event::reconnected)), (words{"count_attempt", "list fresh"}));
    EXPECT_EQ(said(g.m.listed(listing::fresh, ZOK, {ahead})), (words{"requeue"}));
    EXPECT_EQ(said(g.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), words{});  // over
}

// ---- every cancellation point -------------------------------------------------------

TEST(AcquireMachine, CancelledBeforeConnectingLeavesNothingToDelete) {
    fixture f;
    f.m.begin();
    EXPECT_EQ(said(f.m.cancel()), (words{"cleaned_up"}));
    EXPECT_EQ(said(f.m.connected(acquire_step::create)), words{});
}

TEST(AcquireMachine, CancelledWithTheCreateInFlightWaitsForItsReplyThenDeletesTheNode) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    EXPECT_EQ(said(f.m.cancel()), words{});
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), words{});  // no grant after a cancel
    EXPECT_EQ(said(f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a))),
              (words{"delete_node " + ours + " #256 wait"}));
}

TEST(AcquireMachine, CancelledWithTheCreateInFlightWhoseReplyIsLostDeletesByGuid) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.cancel();
    EXPECT_EQ(said(f.m.created(ZCONNECTIONLOSS, {}, {})), (words{"delete_by_guid " + guid + " #256 wait"}));
}

TEST(AcquireMachine, CancelledWhileDisconnectedHandsTheDeleteToTheSessionAndCompletesAtOnce) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.session.connected = false;
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_by_guid " + guid + " #256", "cleaned_up"}));
    // The create was applied after all: its node goes too.
    EXPECT_EQ(said(f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a))), (words{"delete_node " + ours + " #256"}));
}

TEST(AcquireMachine, CancelledWhileWaitingDeletesItsNode) {
    fixture f;
    f.wait_behind_one();
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_node " + ours + " #256 wait"}));
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), words{});
    EXPECT_EQ(said(f.m.cancel()), (words{"cleaned_up"}));  // a second cancel: nothing more
}

TEST(AcquireMachine, CancelledAfterALostCreateReplyDeletesWhateverCarriesItsGuid) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    EXPECT_EQ(said(f.m.created(ZCONNECTIONLOSS, {}, {})), (words{"wait_connected recover " + from_zookeeper(ZCONNECTIONLOSS).message()}));
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_by_guid " + guid + " #256 wait"}));
    EXPECT_EQ(said(f.m.connected(acquire_step::recover)), words{});
}

TEST(AcquireMachine, CancelledWhileTheHandoverIsCheckedDeletesItsNodeAndNeverGrants) {
    auto s = mutex_setup();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), (words{"position", "read_handover"}));
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_node " + ours + " #256 wait"}));
    EXPECT_EQ(said(f.m.handover_read(ZOK, "")), words{});
    EXPECT_EQ(said(f.m.delay_elapsed()), words{});
}

// ---- a lost create reply --------------------------------------------------------------

TEST(AcquireMachine, ALostCreateReplyFindsTheNodeByItsGuidBeforeCreatingAgain) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZCONNECTIONLOSS, {})), words{});  // the create's reply acts
    EXPECT_EQ(said(f.m.created(ZCONNECTIONLOSS, {}, {})), (words{"wait_connected recover " + from_zookeeper(ZCONNECTIONLOSS).message()}));
    EXPECT_EQ(said(f.m.connected(acquire_step::recover)), (words{"catch_up", "count_attempt", "list recover"}));
    EXPECT_EQ(said(f.m.listed(listing::recover, ZOK, {ahead, ours})), (words{"node_known " + ours, "read_token " + ours}));
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))),
              (words{"position #1", "watch_own_node " + ours, "watch_node " + ahead + " #1",
                     "watch_release " + ahead + " #1"}));
}

TEST(AcquireMachine, ALostCreateReplyWhoseCreateWasNotAppliedCreatesAgain) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.created(ZCONNECTIONLOSS, {}, {});
    f.m.connected(acquire_step::recover);
    EXPECT_EQ(said(f.m.listed(listing::recover, ZOK, {ahead})),
              (words{"create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
}

TEST(AcquireMachine, ALostCreateReplyOnANewSessionCreatesAgainWithoutLooking) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.created(ZCONNECTIONLOSS, {}, {});
    f.m.session.id = session_b;  // the old session expired: its ephemeral node is gone
    EXPECT_EQ(said(f.m.connected(acquire_step::recover)),
              (words{"create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
    EXPECT_EQ(said(f.m.cancel()), (words{}));  // the new create is in flight: its reply decides
    EXPECT_EQ(said(f.m.created(ZOK, "/locks/a/" + ours, stat_of(60, session_b))),
              (words{"delete_node " + ours + " #512 wait"}));
}

// ---- a basis for the hold's safe-time budget ------------------------------------------

namespace {

/// A lost create reply, then its node found by the guid, first in its queue,
/// on a session with no write or sync answered: no budget.
void adopt_first_in_line(fixture& f) {
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.created(ZCONNECTIONLOSS, {}, {});
    f.m.session.budget = false;  // the create's reply was the only answer the leader would have given
    f.m.connected(acquire_step::recover);
    EXPECT_EQ(said(f.m.listed(listing::recover, ZOK, {ours})), (words{"node_known " + ours, "read_token " + ours}));
}

} // namespace

TEST(AcquireMachine, AdoptedAfterALostCreateReplyItSyncsBeforeTheGrantWhenNothingWasAnswered) {
    fixture f;
    adopt_first_in_line(f);
    // Held now, its budget would have no basis (zero: `zklock run` would stop its command at once).
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))),
              (words{"position", "confirm_session"}));
    EXPECT_TRUE(f.m.waiting());
    f.m.session.budget = true;  // the sync's answer, noted by the session
    EXPECT_EQ(said(f.m.synced(ZOK)), (words{"grant " + ours + " #50"}));
    EXPECT_TRUE(f.m.held());
}

TEST(AcquireMachine, ANodeFoundByItsGuidIsGrantedAtOnceWhenTheSessionHasABudget) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.created(ZCONNECTIONLOSS, {}, {});
    f.m.connected(acquire_step::recover);
    f.m.listed(listing::recover, ZOK, {ours});
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))),
              (words{"position", "grant " + ours + " #50"}));
}

TEST(AcquireMachine, AWaiterWokenWithoutABudgetSyncsBeforeTheGrant) {
    fixture f;
    f.wait_behind_one();
    f.m.session.budget = false;  // e.g. a reconnect after most of the session timeout
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "confirm_session"}));
    // First for as long as its node lives: a reconnect has nothing to re-check.
    EXPECT_EQ(said(f.m.session_changed(session_event::reconnected)), words{});
    // A second way to the grant while the sync is out sends no second sync.
    EXPECT_EQ(said(f.m.connected(acquire_step::confirm)), words{});
    f.m.session.budget = true;
    EXPECT_EQ(said(f.m.synced(ZOK)), (words{"grant " + ours + " #50"}));
    EXPECT_EQ(said(f.m.synced(ZOK)), words{});  // no second grant
}

TEST(AcquireMachine, AnInterruptedSyncIsSentAgainOnceConnected) {
    fixture f;
    adopt_first_in_line(f);
    f.m.token_read(ZOK, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.synced(ZCONNECTIONLOSS)),
              (words{"wait_connected confirm " + from_zookeeper(ZCONNECTIONLOSS).message()}));
    EXPECT_EQ(said(f.m.connected(acquire_step::confirm)), (words{"confirm_session"}));
    f.m.session.budget = true;
    EXPECT_EQ(said(f.m.synced(ZOK)), (words{"grant " + ours + " #50"}));
}

TEST(AcquireMachine, ASyncAnsweredTooLateForABudgetIsSentAgain) {
    fixture f;
    adopt_first_in_line(f);
    f.m.token_read(ZOK, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.synced(ZOK)), (words{"confirm_session"}));  // still no budget: no grant on it
    EXPECT_TRUE(f.m.waiting());
}

TEST(AcquireMachine, CancelledOrExpiredWhileTheSyncIsOutItNeverGrants) {
    {
        fixture f;
        adopt_first_in_line(f);
        f.m.token_read(ZOK, stat_of(50, session_a));
        EXPECT_EQ(said(f.m.cancel()), (words{"delete_node " + ours + " #256 wait"}));
        f.m.session.budget = true;
        EXPECT_EQ(said(f.m.synced(ZOK)), words{});
    }
    {
        fixture f;
        adopt_first_in_line(f);
        f.m.token_read(ZOK, stat_of(50, session_a));
        EXPECT_EQ(said(f.m.synced(ZSESSIONEXPIRED)), words{});  // the session event decides
        EXPECT_EQ(said(f.m.session_changed(session_event::expired)), (words{"requeue"}));
    }
}

TEST(AcquireMachine, WithLockDelayTheSyncComesAfterTheHandoverCheck) {
    auto s = mutex_setup();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.dir_before_read(ZOK, with_release_marker("", 3), released_cleanly());  // its last holder released it
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    f.m.session.budget = false;
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), (words{"position", "read_handover"}));
    EXPECT_EQ(said(f.m.handover_read(ZOK, "", after_creates(released_cleanly()))), (words{"confirm_session"}));
    f.m.session.budget = true;
    EXPECT_EQ(said(f.m.synced(ZOK)), (words{"grant " + ours + " #50"}));
}

// ---- the session ------------------------------------------------------------------------

TEST(AcquireMachine, ExpiryWhileWaitingQueuesAgainAndTheOldAttemptGoesQuiet) {
    fixture f;
    f.wait_behind_one();
    EXPECT_EQ(said(f.m.session_changed(session_event::expired)), (words{"requeue"}));
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), words{});
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {ours})), words{});
}

TEST(AcquireMachine, ANodeOfAnExpiredSessionIsNotGranted) {
    fixture f;
    f.wait_behind_one();
    f.m.session.id = session_b;  // expired between the listing and the wake-up
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "requeue"}));
}

TEST(AcquireMachine, ACloseWhileWaitingFailsWithTheCloseReason) {
    fixture f;
    f.wait_behind_one();
    const auto out = f.m.session_changed(session_event::closed, make_error_code(errc::auth_failed));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].what, acquire_action::kind::fail);
    EXPECT_EQ(out[0].ec, errc::auth_failed);
}

TEST(AcquireMachine, AHolderLearnsOfExpiryAndOfItsNodeDeletedByAnother) {
    fixture f;
    f.create();
    f.m.listed(listing::pipelined, ZOK, {ours});
    ASSERT_TRUE(f.m.held());
    EXPECT_EQ(said(f.m.own_watch_fired(ZOO_DELETED_EVENT)), (words{"node_gone"}));
    EXPECT_TRUE(f.m.node_gone());
    // The session survived: someone else deleted it.
    EXPECT_EQ(said(f.m.session_changed(session_event::reconnected)), (words{"lose " + make_error_code(errc::node_deleted).message()}));

    fixture g;
    g.create();
    g.m.listed(listing::pipelined, ZOK, {ours});
    EXPECT_EQ(said(g.m.session_changed(session_event::expired)),
              (words{"lose " + make_error_code(errc::session_expired).message()}));
}

TEST(AcquireMachine, AHolderWatchesItsOwnNodeOnlyOnceTheHoldHasSettled) {
    fixture f;
    f.create();
    // The grant alone asks for no watch: a short hold never pays for one.
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), (words{"position", "grant " + ours + " #50"}));
    EXPECT_EQ(said(f.m.hold_settled()), (words{"watch_own_node " + ours}));
    // Its read finding no node (deleted before the watch was set) is the loss.
    EXPECT_EQ(said(f.m.own_watch_set(ZNONODE)), (words{"node_gone"}));
    EXPECT_EQ(said(f.m.hold_settled()), words{});  // gone: nothing to watch

    fixture g;
    g.create();
    g.m.listed(listing::pipelined, ZOK, {ours});
    g.m.release();
    EXPECT_EQ(said(g.m.hold_settled()), words{});  // released before it settled

    fixture w;  // still waiting: the hold has not begun
    w.wait_behind_one();
    EXPECT_EQ(said(w.m.hold_settled()), words{});
}

// ---- cooperative revocation (fsm/revocation.hpp) ---------------------------------------

TEST(AcquireMachine, AHolderThatIsNotRevocableReportsARequestOnceAndKeepsTheLock) {
    fixture f;
    f.create();
    f.m.listed(listing::pipelined, ZOK, {ours});
    f.m.hold_settled();
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "host:42", 0)), words{});  // its own data: nothing asked
    EXPECT_EQ(said(f.m.own_watch_fired(ZOO_CHANGED_EVENT)), (words{"watch_own_node " + ours}));
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "__REVOKE__", 1)), (words{"revocation_request " + ours}));
    // The same request read again (the watch set anew after a reconnect): told once.
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "__REVOKE__", 1)), words{});
    EXPECT_TRUE(f.m.held());
    // A second request is a second write.
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "__REVOKE__", 2)), (words{"revocation_request " + ours}));
}

TEST(AcquireMachine, ARevocableHolderHonoursEachRequestAndOnlyExactlyTheRequestsBytes) {
    auto s = mutex_setup();
    s.revocable = true;
    fixture f(s);
    f.create();
    f.m.listed(listing::pipelined, ZOK, {ours});
    f.m.hold_settled();
    for (const char* not_a_request : {"", "__REVOKE", "__REVOKE__\n", " __REVOKE__", "__revoke__"})
        EXPECT_EQ(said(f.m.own_watch_set(ZOK, not_a_request, 1)), words{}) << not_a_request;
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "__REVOKE__", 2)), (words{"revoke " + ours}));
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "__REVOKE__", 2)), words{});
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "__REVOKE__", 3)), (words{"revoke " + ours}));
    // Letting go is a release (marked when the setup marks), not a loss's cleanup.
    EXPECT_EQ(said(f.m.release()), (words{"forget_position", "delete_node " + ours + " #256 wait"}));
}

TEST(AcquireMachine, ARequestWrittenWhileWaitingIsHonouredAtTheHoldsFirstReadAndAWaiterReadsNone) {
    auto s = mutex_setup();
    s.revocable = true;
    fixture f(s);
    f.wait_behind_one();
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "__REVOKE__", 1)), words{});  // not held: not its business yet
    f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT);
    ASSERT_TRUE(f.m.held());
    EXPECT_EQ(said(f.m.hold_settled()), (words{"watch_own_node " + ours}));
    EXPECT_EQ(said(f.m.own_watch_set(ZOK, "__REVOKE__", 1)), (words{"revoke " + ours}));
    // Gone or failed reads ask nothing.
    fixture g(s);
    g.create();
    g.m.listed(listing::pipelined, ZOK, {ours});
    EXPECT_EQ(said(g.m.own_watch_set(ZNOAUTH, "__REVOKE__", 1)), words{});
}

TEST(AcquireMachine, AHolderSuspendedTooLongLosesOnlyWhenToldToAndThenDeletesItsNode) {
    fixture f;
    f.create();
    f.m.listed(listing::pipelined, ZOK, {ours});
    EXPECT_EQ(said(f.m.session_changed(session_event::suspended_too_long)), words{});
    auto s = mutex_setup();
    s.lose_on_suspension = true;
    fixture g(s);
    g.create();
    g.m.listed(listing::pipelined, ZOK, {ours});
    EXPECT_EQ(said(g.m.session_changed(session_event::suspended_too_long)),
              (words{"lose " + make_error_code(errc::connection_suspended).message()}));
    EXPECT_EQ(said(g.m.lost(make_error_code(errc::connection_suspended))),
              (words{"forget_position", "delete_node " + ours + " #256"}));
}

// ---- a vanished container parent --------------------------------------------------------

TEST(AcquireMachine, AVanishedParentIsCreatedAgainAFewTimesThenTheAcquireFails) {
    fixture f;
    f.m.begin();
    f.m.connected(acquire_step::create);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(said(f.m.listed(listing::pipelined, ZNONODE, {})), words{});
        ASSERT_EQ(said(f.m.created(ZNONODE, {}, {})), (words{"ensure_parents"}));
        EXPECT_EQ(said(f.m.parents_ensured(ZOK, "/locks")),
                  (words{"create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
    }
    const auto out = f.m.created(ZNONODE, {}, {});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].what, acquire_action::kind::fail);
    EXPECT_EQ(out[0].ec, errc::no_node);
}

TEST(AcquireMachine, AMissingChrootIsNamed) {
    auto s = mutex_setup();
    s.policy = std::make_shared<const policy_words>(policy_words{{}, {}, "digest:alice", "/tenant"});
    fixture f(s);
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.created(ZNONODE, {}, {});
    const auto out = f.m.parents_ensured(ZNONODE, "/locks");
    ASSERT_EQ(out.size(), 1u);
    EXPECT_NE(out[0].detail.find("the chroot /tenant"), std::string::npos) << out[0].detail;
}

TEST(AcquireMachine, TheLockDirectoryDeletedUnderAWaiterQueuesAgain) {
    fixture f;
    f.wait_behind_one();
    f.m.session_changed(session_event::reconnected);
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZNONODE, {})), (words{"requeue"}));
}

// ---- the permit count ---------------------------------------------------------------------

namespace {
acquire_setup semaphore_setup() {
    auto s = mutex_setup();
    s.rule.permits = 2;
    s.rule.dir_data = "permits=2";
    return s;
}
} // namespace

TEST(AcquireMachine, APermitCountThatDisagreesFailsTheFirstListing) {
    fixture f(semaphore_setup());
    f.m.begin();
    f.m.connected(acquire_step::create);
    EXPECT_EQ(said(f.m.dir_data_read(ZOK, "permits=3", 4)), words{});
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    const auto out = f.m.listed(listing::pipelined, ZOK, {ours});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].what, acquire_action::kind::fail);
    EXPECT_EQ(out[0].ec, errc::permits_mismatch);
    EXPECT_EQ(out[0].detail, "/locks/a is a semaphore with permits=3, not permits=2");
}

TEST(AcquireMachine, AnEmptyDirectoryIsClaimedAndNoListingDecidesUntilTheClaimSettles) {
    fixture f(semaphore_setup());
    f.m.begin();
    f.m.connected(acquire_step::create);
    EXPECT_EQ(said(f.m.dir_data_read(ZOK, "", 7)), (words{"claim_dir #7"}));
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), words{});
    EXPECT_EQ(said(f.m.dir_claimed(ZOK)), (words{"position", "grant " + ours + " #50"}));
}

TEST(AcquireMachine, AClaimLostToAnotherCountFails) {
    fixture f(semaphore_setup());
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.dir_data_read(ZOK, "", 7);
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    f.m.listed(listing::pipelined, ZOK, {ours});
    EXPECT_EQ(said(f.m.dir_claimed(ZBADVERSION)), (words{"reread_dir_data"}));
    const auto out = f.m.dir_data_reread(ZOK, "permits=5");
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].ec, errc::permits_mismatch);
}

TEST(AcquireMachine, APeersSemaphoreOnThePathIsRefused) {
    fixture f(semaphore_setup());
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.dir_data_read(ZOK, "permits=2", 4);
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    const auto out = f.m.listed(listing::pipelined, ZOK, {"leases", ours});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].ec, errc::foreign_recipe);
}

// ---- the directory's ACL -------------------------------------------------------------------

TEST(AcquireMachine, ADirectoryThatGrantsMoreThanThePolicyFailsTheAcquire) {
    auto s = mutex_setup();
    s.policy = std::make_shared<const policy_words>(
        policy_words{{acl_entry{"digest", "alice:x", perms::all}}, "digest:alice:x:cdrwa", "digest:alice", {}});
    fixture f(s);
    f.m.begin();
    EXPECT_EQ(said(f.m.connected(acquire_step::create)),
              (words{"read_dir_acl", "create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
    f.m.dir_acl_read(ZOK, {acl_entry{"world", "anyone", perms::all}});
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    const auto out = f.m.listed(listing::pipelined, ZOK, {ours});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].ec, errc::insecure_acl);
}

// ---- lock-delay -------------------------------------------------------------------------------

TEST(AcquireMachine, LockDelayGrantsAtOnceAfterACleanReleaseAndRecordsItsOwn) {
    auto s = mutex_setup();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.m.begin();
    EXPECT_EQ(said(f.m.connected(acquire_step::create)),
              (words{"read_dir_before", "create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
    f.m.dir_before_read(ZOK, with_release_marker("", 3), released_cleanly());  // its last holder released it
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), (words{"position", "read_handover"}));
    EXPECT_EQ(said(f.m.handover_read(ZOK, "", after_creates(released_cleanly()))), (words{"grant " + ours + " #50"}));
    EXPECT_EQ(said(f.m.release()), (words{"forget_position", "delete_node " + ours + " #256 wait record /locks/a=" +
                                                                 with_release_marker("", 5)}));
}

TEST(AcquireMachine, LockDelayWaitsWhenANodeCameAndWentBetweenTheReadAndOurCreate) {
    auto s = mutex_setup();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.dir_before_read(ZOK, with_release_marker("", 3), released_cleanly());
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), (words{"position", "read_handover"}));
    // Three child changes for our one create: another node was made first, may have held, and went unreleased.
    auto checked = after_creates(released_cleanly());
    checked.cversion += 2;
    EXPECT_EQ(said(f.m.handover_read(ZOK, "", checked)), (words{"start_delay"}));
    EXPECT_EQ(said(f.m.delay_elapsed()), (words{"grant " + ours + " #50"}));
}

TEST(AcquireMachine, LockDelayWaitsAtANewDirectory) {
    auto s = mutex_setup();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.dir_before_read(ZNONODE, {}, {});  // new, or reaped after a loss with its record
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), (words{"position", "read_handover"}));
    EXPECT_EQ(said(f.m.handover_read(ZOK, "")), (words{"start_delay"}));
    EXPECT_EQ(said(f.m.delay_elapsed()), (words{"grant " + ours + " #50"}));
}

namespace {
acquire_setup lock_delay_setup() {
    auto s = mutex_setup();
    s.rule.lock_delay = 2s;
    return s;
}
/// Under lock-delay: the directory read before the create, then the node made.
void create_after_reading_the_directory(fixture& f) {
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.dir_before_read(ZOK, "", stat_of(0, 0));
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
}
} // namespace

TEST(AcquireMachine, LockDelayWaitsWhenTheHolderAheadLeftWithoutAReleaseRecord) {
    fixture f(lock_delay_setup());
    create_after_reading_the_directory(f);
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ahead, ours})),
              (words{"position #1", "watch_own_node " + ours, "watch_node " + ahead + " #1",
                     "watch_release " + ahead + " #1"}));
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "read_handover"}));
    EXPECT_EQ(said(f.m.handover_read(ZOK, "")), (words{"start_delay"}));  // no record of its release
    EXPECT_EQ(said(f.m.delay_elapsed()), (words{"grant " + ours + " #50"}));
}

TEST(AcquireMachine, UnderLockDelayAGrantDecidedAgainWhileTheHandoverIsCheckedWaitsForTheCheck) {
    fixture f(lock_delay_setup());
    create_after_reading_the_directory(f);
    f.m.listed(listing::pipelined, ZOK, {ahead, ours});
    EXPECT_EQ(said(f.m.session_changed(session_event::reconnected)), (words{"count_attempt", "list fresh"}));
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {ours})), (words{"position", "read_handover"}));
    // Another re-check's listing decides the grant again while the check reads, and while it waits.
    f.m.session_changed(session_event::reconnected);
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {ours})), (words{"position"}));
    EXPECT_EQ(said(f.m.handover_read(ZOK, "")), (words{"start_delay"}));
    f.m.session_changed(session_event::reconnected);
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {ours})), (words{"position"}));
    EXPECT_TRUE(f.m.waiting());
    EXPECT_EQ(said(f.m.delay_elapsed()), (words{"grant " + ours + " #50"}));
    EXPECT_EQ(said(f.m.delay_elapsed()), words{});
}

// ---- the handoff without a listing ------------------------------------------------------

namespace {
acquire_setup marking_setup() {
    auto s = mutex_setup();
    s.mark_release = true;
    return s;
}
} // namespace

TEST(AcquireMachine, AHolderUnderTheMutexRuleMarksItsRelease) {
    fixture f(marking_setup());
    f.wait_behind_one();
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "grant " + ours + " #50"}));
    EXPECT_EQ(said(f.m.release()), (words{"forget_position", "delete_node " + ours + " #256 wait mark"}));
}

TEST(AcquireMachine, AHolderItsListingGrantedWithNobodyAfterItReleasesWithoutTheMark) {
    // Whoever queues later lists it first, and holds on its plain deletion.
    fixture f(marking_setup());
    f.create();
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {ours})), (words{"position", "grant " + ours + " #50"}));
    EXPECT_EQ(said(f.m.release()), (words{"forget_position", "delete_node " + ours + " #256 wait"}));
    // Somebody queued behind it when it listed: that one may have listed while
    // a node was still ahead of ours, and holds without a listing on the mark.
    const std::string behind = "_c_0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5-lock-0000000006";
    fixture g(marking_setup());
    g.create();
    EXPECT_EQ(said(g.m.listed(listing::pipelined, ZOK, {behind, ours})), (words{"position", "grant " + ours + " #50"}));
    EXPECT_EQ(said(g.m.release()), (words{"forget_position", "delete_node " + ours + " #256 wait mark"}));
    // The same after a lost create reply: the listing that found our node decides.
    fixture h(marking_setup());
    h.m.begin();
    h.m.connected(acquire_step::create);
    h.m.created(ZCONNECTIONLOSS, {}, {});
    h.m.connected(acquire_step::recover);
    h.m.listed(listing::recover, ZOK, {ours, behind});
    EXPECT_EQ(said(h.m.token_read(ZOK, stat_of(50, session_a))),
              (words{"position", "grant " + ours + " #50"}));
    EXPECT_EQ(said(h.m.release()), (words{"forget_position", "delete_node " + ours + " #256 wait mark"}));
}

TEST(AcquireMachine, ACancelledWaiterAndALostHoldDoNotMark) {
    fixture f(marking_setup());
    f.wait_behind_one();
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_node " + ours + " #256 wait"}));

    auto s = marking_setup();
    s.lose_on_suspension = true;
    fixture g(s);
    g.create();
    g.m.listed(listing::pipelined, ZOK, {ours});
    EXPECT_EQ(said(g.m.lost(make_error_code(errc::connection_suspended))),
              (words{"forget_position", "delete_node " + ours + " #256"}));
}

TEST(AcquireMachine, ADataChangeOfThePredecessorAndThenItsDeletionIsNoProofThatItHeld) {
    // zklock 0.3's mark and a revocation request both write the node; after a
    // request the node may go another way (its holder's expiry, a waiter's
    // cancel) with the nodes ahead of it still there: simulation seed 528683.
    fixture f(mutex_setup());
    f.create();
    f.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT)), (words{"watch_node " + ahead + " #1"}));
    EXPECT_EQ(said(f.m.watch_set(ahead, 1, ZNONODE, {})), (words{"count_attempt", "list fresh"}));
    EXPECT_FALSE(f.m.held());
    fixture g(mutex_setup());
    g.create();
    g.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    g.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT);
    EXPECT_EQ(said(g.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "count_attempt", "list fresh"}));
    // Behind the last node ahead its deletion grants, however it went.
    fixture h(mutex_setup());
    h.wait_behind_one();
    h.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT);
    EXPECT_EQ(said(h.m.watch_set(ahead, 1, ZNONODE, {})), (words{"grant " + ours + " #50"}));
}

TEST(AcquireMachine, AWaiterWhoseOwnNodeIsDeletedIsNeverGrantedAndQueuesAgain) {
    // Its node deleted by someone else while it waits behind the last node
    // ahead: that node's deletion, told after, must not grant it (simulation
    // seeds 18 and 602). The watch on its own node tells first.
    fixture f;
    f.wait_behind_one();
    EXPECT_EQ(said(f.m.own_watch_fired(ZOO_DELETED_EVENT)), (words{"requeue"}));
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), words{});
    EXPECT_EQ(said(f.m.release_seen(ahead, 1, ZOO_CREATED_EVENT)), words{});
    EXPECT_FALSE(f.m.held());
    // Gone before its watch was set: the read, sent ahead of the others, says so first.
    fixture g;
    g.wait_behind_one();
    EXPECT_EQ(said(g.m.own_watch_set(ZNONODE)), (words{"requeue"}));
    EXPECT_EQ(said(g.m.watch_set(ahead, 1, ZNONODE, {})), words{});
    EXPECT_FALSE(g.m.held());
    // A write into its node (a revocation request) watches it again; a failed
    // read leaves none, and the next round sets it again.
    fixture h;
    h.wait_behind_one();
    EXPECT_EQ(said(h.m.own_watch_fired(ZOO_CHANGED_EVENT)), (words{"watch_own_node " + ours}));
    EXPECT_EQ(said(h.m.own_watch_set(ZCONNECTIONLOSS)), words{});
    EXPECT_EQ(said(h.m.session_changed(session_event::reconnected)), (words{"count_attempt", "list fresh"}));
    EXPECT_EQ(said(h.m.listed(listing::fresh, ZOK, {ahead, ours})),
              (words{"position #1", "watch_own_node " + ours, "watch_node " + ahead + " #3",
                     "watch_release " + ahead + " #3"}));
    EXPECT_EQ(said(h.m.own_watch_set(ZOK, "__REVOKE__", 1)), words{});
    // Watched once per wait: a later round does not ask again.
    EXPECT_EQ(said(h.m.session_changed(session_event::reconnected)), (words{"count_attempt", "list fresh"}));
    EXPECT_EQ(said(h.m.listed(listing::fresh, ZOK, {ahead, ours})),
              (words{"position #1", "watch_node " + ahead + " #5", "watch_release " + ahead + " #5"}));
    EXPECT_EQ(said(h.m.watch_fired(ahead, 5, ZOO_DELETED_EVENT)), (words{"count_wakeup", "grant " + ours + " #50"}));
    // Held, the same watch tells the holder of a deletion as the hold's own watch does.
    EXPECT_EQ(said(h.m.own_watch_fired(ZOO_DELETED_EVENT)), (words{"node_gone"}));
    // A write into its node used the watch: until it is set again a deletion
    // would go untold, so the next wake-up lists (simulation seed 181685 of
    // the long mode: a request, then the node deleted, then the release told).
    fixture w;
    w.wait_behind_one();
    EXPECT_EQ(said(w.m.own_watch_fired(ZOO_CHANGED_EVENT)), (words{"watch_own_node " + ours}));
    EXPECT_EQ(said(w.m.release_seen(ahead, 1, ZOO_CREATED_EVENT)), (words{"count_wakeup", "count_attempt", "list fresh"}));
    EXPECT_EQ(said(w.m.own_watch_set(ZNONODE)), (words{"requeue"}));
    EXPECT_FALSE(w.m.held());
    fixture v;
    v.wait_behind_one();
    v.m.own_watch_fired(ZOO_CHANGED_EVENT);
    EXPECT_EQ(said(v.m.own_watch_set(ZOK, "__REVOKE__", 1)), words{});
    EXPECT_EQ(said(v.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "grant " + ours + " #50"}));
}

TEST(AcquireMachine, ARevocationRequestWrittenIntoThePredecessorIsNoReleaseMark) {
    // Curator's Revoker (or zklock's request) writes the holder's node: the
    // waiter behind it is told of a data change, as by a release mark. The
    // holder is still there, and may keep the lock.
    fixture f(marking_setup());
    f.create();
    f.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT)), (words{"watch_node " + ahead + " #1"}));
    EXPECT_EQ(said(f.m.watch_set(ahead, 1, ZOK, stat_of(40, session_b))), words{});  // still there: wait on
    EXPECT_TRUE(f.m.waiting());
    // Its later deletion without a mark (a peer's release): the node just ahead
    // was not the only one, so the waiter lists.
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "count_attempt", "list fresh"}));
    // Behind the holder alone, the same request and then its marked release.
    fixture g(marking_setup());
    g.wait_behind_one();
    g.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT);
    EXPECT_EQ(said(g.m.watch_set(ahead, 1, ZOK, stat_of(40, session_b))), words{});
    EXPECT_FALSE(g.m.held());
    g.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT);
    EXPECT_EQ(said(g.m.watch_set(ahead, 1, ZNONODE, {})), (words{"grant " + ours + " #50"}));
    // A plain read that finds the node gone (no change seen first) proves nothing.
    fixture h(marking_setup());
    h.create();
    h.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    h.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT);
    h.m.watch_set(ahead, 1, ZOK, stat_of(40, session_b));
    EXPECT_EQ(said(h.m.watch_set(ahead, 1, ZNONODE, {})), (words{"count_attempt", "list fresh"}));
}

TEST(AcquireMachine, TheReleasedSiblingsCreationGrantsWithoutARead) {
    // Behind other waiters: the node just ahead held when it released (its
    // `.released` sibling is created only by a holder's release), so nothing
    // is ahead any more, and the waiter holds on that event alone.
    fixture f(mutex_setup());
    f.create();
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours})),
              (words{"position #2", "watch_own_node " + ours, "watch_node " + ahead + " #1",
                     "watch_release " + ahead + " #1"}));
    EXPECT_EQ(said(f.m.release_seen(ahead, 1, ZOO_CREATED_EVENT)), (words{"count_wakeup", "grant " + ours + " #50"}));
    EXPECT_TRUE(f.m.held());
    // The same transaction's mark and deletion, told next, are of a round that is over.
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT)), words{});
    EXPECT_EQ(said(f.m.watch_set(ahead, 1, ZNONODE, {})), words{});
    // The mark first, then the sibling: the read it asked for is not waited for.
    fixture g(mutex_setup());
    g.create();
    g.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    EXPECT_EQ(said(g.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT)), (words{"watch_node " + ahead + " #1"}));
    EXPECT_EQ(said(g.m.release_seen(ahead, 1, ZOO_CREATED_EVENT)), (words{"count_wakeup", "grant " + ours + " #50"}));
    EXPECT_EQ(said(g.m.watch_set(ahead, 1, ZNONODE, {})), words{});
}

TEST(AcquireMachine, ASiblingEventOtherThanItsCreationOrOfAStaleRoundGrantsNothing) {
    fixture f(mutex_setup());
    f.create();
    f.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    // A sibling somebody left there is deleted or written: no release told.
    EXPECT_EQ(said(f.m.release_seen(ahead, 1, ZOO_DELETED_EVENT)), words{});
    EXPECT_EQ(said(f.m.release_seen(ahead, 1, ZOO_CHANGED_EVENT)), words{});
    // Of an earlier round (its node went without a release; the queue was listed again).
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "count_attempt", "list fresh"}));
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {further_ahead, ours})),
              (words{"position #1", "watch_node " + further_ahead + " #3", "watch_release " + further_ahead + " #3"}));
    EXPECT_EQ(said(f.m.release_seen(ahead, 1, ZOO_CREATED_EVENT)), words{});
    EXPECT_FALSE(f.m.held());
    // A semaphore's permit proves nothing about the nodes ahead of it: no sibling watched, none trusted.
    auto s = semaphore_setup();
    s.mark_release = true;
    fixture g(s);
    g.m.begin();
    g.m.connected(acquire_step::create);
    g.m.dir_data_read(ZOK, "permits=2", 3);
    g.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    EXPECT_EQ(said(g.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours})),
              (words{"position #2", "watch_own_node " + ours, "watch_node " + further_ahead + " #1",
                     "watch_node " + ahead + " #1"}));
    EXPECT_EQ(said(g.m.release_seen(ahead, 1, ZOO_CREATED_EVENT)), words{});
}

TEST(AcquireMachine, APredecessorThatLeftWithoutTheMarkIsNoProofAndTheWaiterLists) {
    fixture f(marking_setup());
    f.create();
    f.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    // A plain deletion: it was cancelled, its session ended, or a peer released it.
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "count_attempt", "list fresh"}));
    // Gone before the watch was set: nothing says it held either.
    fixture g(marking_setup());
    g.create();
    g.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    EXPECT_EQ(said(g.m.watch_set(ahead, 1, ZNONODE, {})), (words{"count_attempt", "list fresh"}));
}

TEST(AcquireMachine, AMarkOfAStaleRoundIsIgnored) {
    fixture f(marking_setup());
    f.create();
    f.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    EXPECT_EQ(said(f.m.session_changed(session_event::reconnected)), (words{"count_attempt", "list fresh"}));
    const std::string other = "_c_9a0364b9-e99b-4b3c-9d1f-2a0c3e2f8f11-lock-0000000004";
    EXPECT_EQ(said(f.m.listed(listing::fresh, ZOK, {further_ahead, other, ours})),
              (words{"position #2", "watch_node " + other + " #3", "watch_release " + other + " #3"}));
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT)), words{});
    EXPECT_FALSE(f.m.held());
}

TEST(AcquireMachine, ASemaphoreOrAReaderDoesNotTrustMarksNorMarks) {
    auto s = semaphore_setup();
    s.mark_release = true;
    fixture f(s);
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.dir_data_read(ZOK, "permits=2", 3);
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    const std::string third = "_c_3d813cbb-47fb-32ba-91df-831e1593ac29-lock-0000000002";
    f.m.listed(listing::pipelined, ZOK, {third, further_ahead, ahead, ours});
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_CHANGED_EVENT)), (words{"watch_node " + ahead + " #1"}));
    EXPECT_EQ(said(f.m.watch_fired(ahead, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "count_attempt", "list fresh"}));
    f.m.listed(listing::fresh, ZOK, {further_ahead, ours});
    ASSERT_TRUE(f.m.held());
    EXPECT_EQ(said(f.m.release()), (words{"forget_position", "delete_node " + ours + " #256 wait"}));
}

TEST(AcquireMachine, LockDelayAfterAMarkedHandoffJudgesTheNodeThatHeld) {
    auto s = marking_setup();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.m.begin();
    f.m.connected(acquire_step::create);
    f.m.dir_before_read(ZOK, "", stat_of(0, 0));
    f.m.created(ZOK, "/locks/a/" + ours, stat_of(50, session_a));
    f.m.listed(listing::pipelined, ZOK, {further_ahead, ahead, ours});
    EXPECT_EQ(said(f.m.release_seen(ahead, 1, ZOO_CREATED_EVENT)), (words{"count_wakeup", "read_handover"}));
    // The node that held (sequence 4) recorded its clean release: no wait.
    EXPECT_EQ(said(f.m.handover_read(ZOK, with_release_marker("", 4))), (words{"grant " + ours + " #50"}));
    // Its own release records itself and marks.
    EXPECT_EQ(said(f.m.release()), (words{"forget_position", "delete_node " + ours + " #256 wait mark record /locks/a=" +
                                                                 with_release_marker("", 5)}));
}

// ---- a lock directory the session has not seen ------------------------------------------

TEST(AcquireMachine, ADirectoryTheSessionHasNotSeenIsCreatedAheadOfTheNodeInTheSameRoundTrip) {
    fixture f;
    f.m.session.dir_known = false;
    f.m.begin();
    EXPECT_EQ(said(f.m.connected(acquire_step::create)),
              (words{"make_dir", "create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
    // Its parent was missing too: the node's create found no directory, and
    // ensure_parents makes every level; the create that follows goes alone.
    EXPECT_EQ(said(f.m.listed(listing::pipelined, ZNONODE, {})), words{});
    ASSERT_EQ(said(f.m.created(ZNONODE, {}, {})), (words{"ensure_parents"}));
    EXPECT_EQ(said(f.m.parents_ensured(ZOK, "/locks")),
              (words{"create _c_" + guid + "-lock-", "count_attempt", "list pipelined"}));
    // A semaphore's directory is made before its data is read.
    auto s = semaphore_setup();
    fixture g(s);
    g.m.session.dir_known = false;
    g.m.begin();
    const auto out = said(g.m.connected(acquire_step::create));
    ASSERT_GE(out.size(), 2u);
    EXPECT_EQ(out[0], "make_dir");
    EXPECT_EQ(out[1], "read_dir_data");
}
