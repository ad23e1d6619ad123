// The acquire protocol of a lock set (fsm/acquire_machine.hpp with several
// queues) step by step, without a server: each test feeds the events a server
// and a session would give and checks the actions the machine asks for, in
// order. One queue's: test_acquire_machine.cpp.
#include "fsm/acquire_machine.hpp"
#include "fsm/limits.hpp"
#include <zklock/error.hpp>

#include "machine_words.hpp"

#include <gtest/gtest.h>

#include <zookeeper.h>

#include <string>
#include <string_view>
#include <vector>

using namespace zklock;
using namespace zklock::detail;
using namespace std::chrono_literals;

// A namespace of its own: the unit tests compile as one unit, beside
// test_acquire_machine.cpp's fixture of the same name.
namespace set_acquire_tests {
using namespace machine_words;

namespace {

const std::string prefix = "_c_" + guid + "-lock-";
const std::string ours_a = prefix + "0000000005";  // our node in /locks/a
const std::string ours_b = prefix + "0000000002";  // and in /locks/b
const std::string path_a = "/locks/a/" + ours_a;
const std::string path_b = "/locks/b/" + ours_b;
const std::string ahead_a = "_c_1b4e28ba-2fa1-11d2-883f-0016d3cca427-lock-0000000004";
const std::string further_a = "_c_6fa459ea-ee8a-3ca4-894e-db77e160355e-lock-0000000003";
const std::string ahead_b = "_c_3d813cbb-47fb-32ba-91df-831e1593ac29-lock-0000000001";

acquire_setup two_locks() {
    acquire_setup s;
    s.dirs = {"/locks/a", "/locks/b"};
    s.policy = std::make_shared<const policy_words>(policy_words{{}, "world:anyone:cdrwa", "digest:alice", {}});
    return s;
}

/// The transaction and the pipelined listings, as begin() + connected() send them.
const words transaction{"create " + prefix, "count_attempt", "list pipelined", "list pipelined @1"};

/// A machine for the set /locks/a + /locks/b on a connected session `session_a`.
struct fixture {
    explicit fixture(acquire_setup s = two_locks()) : setup(std::move(s)), m(setup, guid) {
        m.session = {session_a, true, false};
    }
    /// Connected and the transaction sent.
    void send() {
        EXPECT_EQ(said(m.begin()), (words{"forget_position", "wait_connected create"}));
        EXPECT_EQ(said(m.connected(acquire_step::create)), transaction);
    }
    /// The transaction made our nodes; the token's read is on its way.
    void create() {
        send();
        EXPECT_EQ(said(m.multi_created(ZOK, {}, {path_a, path_b})), (words{"node_known " + ours_a, "node_known @1 " + ours_b, "read_token " + ours_a}));
    }
    /// Created, listed behind `ahead_a` in /locks/a and first in /locks/b: waiting in /locks/a.
    void wait_in_a() {
        create();
        m.listed(0, listing::pipelined, ZOK, {ahead_a, ours_a});
        m.listed(1, listing::pipelined, ZOK, {ours_b});
        EXPECT_EQ(said(m.token_read(ZOK, stat_of(50, session_a))),
                  (words{"position #1", "watch_own_node " + ours_a, "watch_own_node @1 " + ours_b,
                         "watch_node " + ahead_a + " #1"}));
        EXPECT_TRUE(m.waiting());
    }
    /// Under lock-delay: each directory's record read (`before_a`, `before_b`) and the transaction made our nodes.
    void create_after_reading(std::string_view before_a, std::string_view before_b) {
        m.begin();
        m.connected(acquire_step::create);
        m.dir_before_read(0, ZOK, before_a, released_cleanly());
        m.dir_before_read(1, ZOK, before_b, released_cleanly());
        m.multi_created(ZOK, {}, {path_a, path_b});
    }
    acquire_setup setup;
    acquire_machine m;
};

} // namespace

// ---- the common path ----------------------------------------------------------------

TEST(AcquireMachineSet, OneTransactionAndEveryListingInOneRoundTripThenTheTokenThenTheGrant) {
    fixture f;
    f.create();
    EXPECT_EQ(said(f.m.listed(0, listing::pipelined, ZOK, {ours_a})), words{});
    EXPECT_EQ(said(f.m.listed(1, listing::pipelined, ZOK, {ours_b})), words{});
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))),
              (words{"position", "grant " + ours_a + " #50"}));
    EXPECT_TRUE(f.m.held());
    EXPECT_EQ(f.m.positions(), (std::vector<std::optional<std::size_t>>{0, 0}));
    EXPECT_EQ(f.m.node_paths(), (words{path_a, path_b}));
}

TEST(AcquireMachineSet, AFailedPipelinedListingIsSentAgainAfterTheToken) {
    fixture f;
    f.create();
    f.m.listed(0, listing::pipelined, ZOK, {ours_a});
    f.m.listed(1, listing::pipelined, ZCONNECTIONLOSS, {});
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))), (words{"count_attempt", "list fresh @1"}));
    EXPECT_EQ(said(f.m.listed(1, listing::fresh, ZOK, {ours_b})),
              (words{"position", "grant " + ours_a + " #50"}));
}

TEST(AcquireMachineSet, TheDeletionOfTheLastBlockerGrantsThatQueueWithoutAListing) {
    fixture f;
    f.wait_in_a();
    EXPECT_EQ(f.m.positions(), (std::vector<std::optional<std::size_t>>{1, 0}));
    EXPECT_EQ(said(f.m.watch_set(0, ahead_a, 1, ZOK, stat_of(40, session_b))), words{});
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "grant " + ours_a + " #50"}));
    EXPECT_EQ(f.m.positions(), (std::vector<std::optional<std::size_t>>{0, 0}));
}

TEST(AcquireMachineSet, AWakeBehindAnotherContenderListsThatQueueOnly) {
    fixture f;
    f.create();
    f.m.listed(0, listing::pipelined, ZOK, {further_a, ahead_a, ours_a});
    f.m.listed(1, listing::pipelined, ZOK, {ahead_b, ours_b});
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))),
              (words{"position #2", "watch_own_node " + ours_a, "watch_own_node @1 " + ours_b,
                     "watch_node " + ahead_a + " #1", "watch_node @1 " + ahead_b + " #1"}));
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "count_attempt", "list fresh"}));
    EXPECT_EQ(said(f.m.listed(0, listing::fresh, ZOK, {further_a, ours_a})),
              (words{"position #1", "watch_node " + further_a + " #3"}));
    // /locks/b's watch is of its own round: still current.
    EXPECT_EQ(said(f.m.watch_fired(1, ahead_b, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "position #1"}));
    EXPECT_EQ(said(f.m.watch_fired(0, further_a, 3, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "grant " + ours_a + " #50"}));
}

TEST(AcquireMachineSet, AStaleWatchOrAChangeOfDataDoesNotGrant) {
    fixture f;
    f.wait_in_a();
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_CHANGED_EVENT)), (words{"watch_node " + ahead_a + " #1"}));
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 0, ZOO_DELETED_EVENT)), words{});  // an earlier round's
    EXPECT_EQ(said(f.m.watch_fired(1, ahead_a, 1, ZOO_DELETED_EVENT)), words{});  // another queue's round
    EXPECT_TRUE(f.m.waiting());
}

TEST(AcquireMachineSet, APredecessorAlreadyGoneGrantsAtOnce) {
    fixture f;
    f.wait_in_a();
    EXPECT_EQ(said(f.m.watch_set(0, ahead_a, 1, ZNONODE, {})),
              (words{"grant " + ours_a + " #50"}));
}

TEST(AcquireMachineSet, APersistentNodeAheadFailsWithTheCommandThatClearsIt) {
    fixture f;
    f.wait_in_a();
    const auto out = f.m.watch_set(0, ahead_a, 1, ZOK, stat_of(40, 0));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].what, acquire_action::kind::fail);
    EXPECT_EQ(out[0].ec, errc::blocked_by_persistent_node);
    EXPECT_NE(out[0].detail.find("zkCli.sh delete /locks/a/" + ahead_a), std::string::npos);
}

TEST(AcquireMachineSet, ATryThatWouldWaitGivesUpAndItsCancelDeletesEveryNodeWithOneMulti) {
    auto s = two_locks();
    s.no_wait = true;
    fixture f(s);
    f.create();
    f.m.listed(0, listing::pipelined, ZOK, {ahead_a, ours_a});
    f.m.listed(1, listing::pipelined, ZOK, {ours_b});
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))), (words{"position #1", "give_up"}));
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_node " + path_a + " " + path_b + " #256 wait"}));
}

// ---- the transaction ----------------------------------------------------------------

TEST(AcquireMachineSet, AMissingDirectoryMakesEveryDirectoryThenTriesAgain) {
    fixture f;
    f.send();
    // The transaction fails as a whole; the pipelined listings say nothing.
    EXPECT_EQ(said(f.m.listed(0, listing::pipelined, ZNONODE, {})), words{});
    EXPECT_EQ(said(f.m.multi_created(ZNONODE, {ZOK, ZNONODE}, {})), (words{"ensure_parents", "ensure_parents @1"}));
    EXPECT_EQ(said(f.m.parents_ensured(1, ZOK, {})), words{});
    EXPECT_EQ(said(f.m.parents_ensured(0, ZNODEEXISTS, {})), transaction);
}

TEST(AcquireMachineSet, ADirectoryThatKeepsVanishingFailsAfterAFewTries) {
    fixture f;
    f.send();
    for (int i = 0; i < max_parent_retries; ++i) {
        f.m.multi_created(ZNONODE, {ZNONODE, ZRUNTIMEINCONSISTENCY}, {});
        f.m.parents_ensured(0, ZOK, {});
        EXPECT_EQ(said(f.m.parents_ensured(1, ZOK, {})), transaction);
    }
    const auto out = f.m.multi_created(ZNONODE, {ZNONODE, ZRUNTIMEINCONSISTENCY}, {});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].what, acquire_action::kind::fail);
    EXPECT_EQ(out[0].ec, errc::no_node);
}

TEST(AcquireMachineSet, AParentRefusedNamesThePathAndWhoWasRefused) {
    fixture f;
    f.send();
    f.m.multi_created(ZNONODE, {ZNONODE, ZRUNTIMEINCONSISTENCY}, {});
    f.m.parents_ensured(0, ZNOAUTH, "/locks");
    const auto out = f.m.parents_ensured(1, ZOK, {});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].ec, errc::no_auth);
    EXPECT_EQ(out[0].detail, "not authorized: digest:alice may not create /locks");
}

TEST(AcquireMachineSet, ARefusedTransactionNamesTheDirectoryThatRefusedIt) {
    fixture f;
    f.send();
    const auto out = f.m.multi_created(ZNOAUTH, {ZRUNTIMEINCONSISTENCY, ZNOAUTH}, {});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].ec, errc::no_auth);
    EXPECT_EQ(out[0].detail, "not authorized: digest:alice may not create lock nodes under /locks/b");
}

// ---- a lost transaction reply ---------------------------------------------------------

TEST(AcquireMachineSet, ALostReplyOfATransactionThatCommittedIsFoundByGuidAndNotCreatedAgain) {
    fixture f;
    f.send();
    EXPECT_EQ(said(f.m.multi_created(ZCONNECTIONLOSS, {}, {})), (words{"wait_connected recover " + from_zookeeper(ZCONNECTIONLOSS).message()}));
    EXPECT_EQ(said(f.m.connected(acquire_step::recover)),
              (words{"catch_up", "count_attempt", "list recover", "list recover @1"}));
    EXPECT_EQ(said(f.m.listed(1, listing::recover, ZOK, {ahead_b, ours_b})), words{});
    EXPECT_EQ(said(f.m.listed(0, listing::recover, ZOK, {ours_a})),
              (words{"node_known " + ours_a, "node_known @1 " + ours_b, "read_token " + ours_a}));
    // The recovering listings decide: no listing again.
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))),
              (words{"position #1", "watch_own_node " + ours_a, "watch_own_node @1 " + ours_b,
                     "watch_node @1 " + ahead_b + " #1"}));
}

TEST(AcquireMachineSet, ALostReplyOfATransactionThatDidNotCommitCreatesAgain) {
    fixture f;
    f.send();
    f.m.multi_created(ZOPERATIONTIMEOUT, {}, {});
    f.m.connected(acquire_step::recover);
    f.m.listed(0, listing::recover, ZOK, {ahead_a});
    EXPECT_EQ(said(f.m.listed(1, listing::recover, ZNONODE, {})), transaction);
}

TEST(AcquireMachineSet, ALostReplyOnANewSessionCreatesAgainWithoutLooking) {
    fixture f;
    f.send();
    f.m.multi_created(ZCONNECTIONLOSS, {}, {});
    f.m.session.id = session_b;
    EXPECT_EQ(said(f.m.connected(acquire_step::recover)), transaction);
}

TEST(AcquireMachineSet, ATransactionFoundInPartDeletesWhatIsLeftAndQueuesAgain) {
    fixture f;
    f.send();
    f.m.multi_created(ZCONNECTIONLOSS, {}, {});
    f.m.connected(acquire_step::recover);
    f.m.listed(0, listing::recover, ZOK, {ours_a});
    EXPECT_EQ(said(f.m.listed(1, listing::recover, ZOK, {ahead_b})),
              (words{"delete_node " + ours_a + " #256", "requeue"}));
    EXPECT_FALSE(f.m.waiting());
}

TEST(AcquireMachineSet, AReplyOfAnEarlierGatheringIsNotCountedInTheRecovery) {
    fixture f;
    f.send();
    f.m.multi_created(ZNONODE, {ZNONODE, ZRUNTIMEINCONSISTENCY}, {});
    f.m.parents_ensured(0, ZOK, {});
    EXPECT_EQ(said(f.m.parents_ensured(1, ZCONNECTIONLOSS, {})), (words{"wait_connected create " + from_zookeeper(ZCONNECTIONLOSS).message()}));
    f.m.connected(acquire_step::create);
    f.m.multi_created(ZCONNECTIONLOSS, {}, {});
    f.m.connected(acquire_step::recover);
    // A late duplicate of the parents' replies: not one of the recovery's.
    EXPECT_EQ(said(f.m.parents_ensured(1, ZOK, {})), words{});
    EXPECT_EQ(said(f.m.listed(0, listing::recover, ZOK, {ours_a})), words{});
    EXPECT_EQ(said(f.m.listed(1, listing::recover, ZOK, {ours_b})), (words{"node_known " + ours_a, "node_known @1 " + ours_b, "read_token " + ours_a}));
}

// ---- a basis for the hold's safe-time budget ------------------------------------------

TEST(AcquireMachineSet, AdoptedAfterALostTransactionReplyItSyncsBeforeTheGrantWhenNothingWasAnswered) {
    fixture f;
    f.send();
    f.m.multi_created(ZCONNECTIONLOSS, {}, {});
    f.m.session.budget = false;  // the transaction's reply was the only answer the leader would have given
    f.m.connected(acquire_step::recover);
    f.m.listed(0, listing::recover, ZOK, {ours_a});
    EXPECT_EQ(said(f.m.listed(1, listing::recover, ZOK, {ours_b})), (words{"node_known " + ours_a, "node_known @1 " + ours_b, "read_token " + ours_a}));
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))), (words{"position", "confirm_session"}));
    EXPECT_TRUE(f.m.waiting());
    EXPECT_EQ(said(f.m.synced(ZCONNECTIONLOSS)), (words{"wait_connected confirm " + from_zookeeper(ZCONNECTIONLOSS).message()}));
    EXPECT_EQ(said(f.m.connected(acquire_step::confirm)), (words{"confirm_session"}));
    f.m.session.budget = true;  // the sync's answer, noted by the session
    EXPECT_EQ(said(f.m.synced(ZOK)), (words{"grant " + ours_a + " #50"}));
    EXPECT_TRUE(f.m.held());
    EXPECT_EQ(said(f.m.synced(ZOK)), words{});
}

TEST(AcquireMachineSet, AWaiterWokenWithoutABudgetSyncsAndACancelMeanwhileNeverGrants) {
    fixture f;
    f.wait_in_a();
    f.m.session.budget = false;
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "confirm_session"}));
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_node " + path_a + " " + path_b + " #256 wait"}));
    f.m.session.budget = true;
    EXPECT_EQ(said(f.m.synced(ZOK)), words{});
}

// ---- cancellation ---------------------------------------------------------------------

TEST(AcquireMachineSet, ACancelWithTheTransactionInFlightWaitsForItsReplyThenDeletesWhatItMade) {
    fixture f;
    f.send();
    EXPECT_EQ(said(f.m.cancel()), words{});
    EXPECT_EQ(said(f.m.listed(0, listing::pipelined, ZOK, {ours_a})), words{});
    EXPECT_EQ(said(f.m.multi_created(ZOK, {}, {path_a, path_b})),
              (words{"delete_node " + path_a + " " + path_b + " #256 wait"}));
}

TEST(AcquireMachineSet, ACancelWithTheTransactionInFlightThatFailedLeavesNothingToDelete) {
    fixture f;
    f.send();
    f.m.cancel();
    EXPECT_EQ(said(f.m.multi_created(ZNOAUTH, {ZNOAUTH, ZRUNTIMEINCONSISTENCY}, {})), (words{"cleaned_up"}));
}

TEST(AcquireMachineSet, ACancelAfterALostReplyDeletesByGuidInEveryDirectory) {
    // The session's janitor lists every directory of the set, then deletes
    // what carries the guid with one transaction.
    fixture f;
    f.send();
    f.m.multi_created(ZCONNECTIONLOSS, {}, {});
    EXPECT_EQ(said(f.m.cancel()),
              (words{"delete_by_guid " + guid + " #256 wait"}));
}

TEST(AcquireMachineSet, ACancelWhileDisconnectedLeavesTheDeletesToTheSessionAndCompletesAtOnce) {
    fixture f;
    f.send();
    f.m.session.connected = false;
    EXPECT_EQ(said(f.m.cancel()),
              (words{"delete_by_guid " + guid + " #256", "cleaned_up"}));
    // The transaction's reply comes after all: what it made goes too.
    EXPECT_EQ(said(f.m.multi_created(ZOK, {}, {path_a, path_b})), (words{"delete_node " + path_a + " " + path_b + " #256"}));
}

TEST(AcquireMachineSet, ACancelWhileWaitingDeletesEveryNode) {
    fixture f;
    f.wait_in_a();
    EXPECT_EQ(said(f.m.cancel()), (words{"delete_node " + path_a + " " + path_b + " #256 wait"}));
    // A late wake-up of the cancelled attempt does nothing.
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)), words{});
    EXPECT_EQ(said(f.m.cancel()), (words{"cleaned_up"}));
}

// ---- the session ----------------------------------------------------------------------

TEST(AcquireMachineSet, ExpiryWhileWaitingQueuesAgainOnTheNewSession) {
    fixture f;
    f.wait_in_a();
    EXPECT_EQ(said(f.m.session_changed(session_event::expired)), (words{"requeue"}));
}

TEST(AcquireMachineSet, ACloseWhileWaitingFailsWithTheSessionsReason) {
    fixture f;
    f.wait_in_a();
    const auto out = f.m.session_changed(session_event::closed, make_error_code(errc::auth_failed));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].what, acquire_action::kind::fail);
    EXPECT_EQ(out[0].ec, errc::auth_failed);
}

TEST(AcquireMachineSet, AReconnectListsAgainEveryQueueWeWaitIn) {
    fixture f;
    f.create();
    f.m.listed(0, listing::pipelined, ZOK, {ahead_a, ours_a});
    f.m.listed(1, listing::pipelined, ZOK, {ahead_b, ours_b});
    f.m.token_read(ZOK, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.session_changed(session_event::reconnected)),
              (words{"count_attempt", "list fresh", "count_attempt", "list fresh @1"}));
    // The watches of before are stale now.
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)), words{});
}

TEST(AcquireMachineSet, ANodeOfOursDeletedWhileWaitingIsNeverGrantedAndTheSetQueuesAgain) {
    // First in /locks/b by the listing, its node there is not listed again:
    // its deletion by someone else, told before the last blocker's in
    // /locks/a, must keep the set from holding on a node that is gone.
    fixture f;
    f.wait_in_a();
    EXPECT_EQ(said(f.m.own_watch_fired(1, ZOO_DELETED_EVENT)), (words{"delete_node " + ours_a + " #256", "requeue"}));
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)), words{});
    EXPECT_FALSE(f.m.held());
    // Gone before the watch was set: its read says so first.
    fixture g;
    g.wait_in_a();
    EXPECT_EQ(said(g.m.own_watch_set(0, ZNONODE)), (words{"delete_node @1 " + ours_b + " #256", "requeue"}));
    EXPECT_EQ(said(g.m.watch_set(0, ahead_a, 1, ZNONODE, {})), words{});
    EXPECT_FALSE(g.m.held());
    // A write into a waiting node watches it again; a plain read asks nothing.
    fixture h;
    h.wait_in_a();
    EXPECT_EQ(said(h.m.own_watch_fired(1, ZOO_CHANGED_EVENT)), (words{"watch_own_node @1 " + ours_b}));
    EXPECT_EQ(said(h.m.own_watch_set(1, ZOK, "__REVOKE__", 1)), words{});
    EXPECT_EQ(said(h.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "grant " + ours_a + " #50"}));
}

TEST(AcquireMachineSet, AWriteIntoAWaitingNodeUsedItsWatchSoAGrantListsThatQueueFirst) {
    // The long mode's seed 181685, in a set: a request written into our node
    // in /locks/b used its watch; deleted before the watch is set again, the
    // node would go untold, and the last blocker's deletion in /locks/a, told
    // next, would grant the set on a node that is gone. That queue is listed
    // first (behind the new watch: its answer comes before the listing's).
    fixture f;
    f.wait_in_a();
    EXPECT_EQ(said(f.m.own_watch_fired(1, ZOO_CHANGED_EVENT)), (words{"watch_own_node @1 " + ours_b}));
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "count_attempt", "list fresh @1"}));
    EXPECT_FALSE(f.m.held());
    EXPECT_EQ(said(f.m.own_watch_set(1, ZNONODE)), (words{"delete_node " + ours_a + " #256", "requeue"}));
    EXPECT_FALSE(f.m.held());
    // Watched again and still there: the listing grants.
    fixture g;
    g.wait_in_a();
    g.m.own_watch_fired(1, ZOO_CHANGED_EVENT);
    g.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT);
    EXPECT_EQ(said(g.m.own_watch_set(1, ZOK, "__REVOKE__", 1)), words{});
    EXPECT_EQ(said(g.m.listed(1, listing::fresh, ZOK, {ours_b})), (words{"position", "grant " + ours_a + " #50"}));
    EXPECT_TRUE(g.m.held());
    // The queue it waits in likewise: its wake-up lists.
    fixture h;
    h.wait_in_a();
    EXPECT_EQ(said(h.m.own_watch_fired(0, ZOO_CHANGED_EVENT)), (words{"watch_own_node " + ours_a}));
    EXPECT_EQ(said(h.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "count_attempt", "list fresh"}));
    EXPECT_FALSE(h.m.held());
}

TEST(AcquireMachineSet, NodesOfASessionThatExpiredBeforeTheGrantAreNotHeld) {
    fixture f;
    f.wait_in_a();
    f.m.session.id = session_b;  // the expiry's event has not come yet
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)), (words{"count_wakeup", "requeue"}));
    EXPECT_FALSE(f.m.held());
}

TEST(AcquireMachineSet, AConnectionThatNeverComesBackFailsTheAcquire) {
    fixture f;
    f.send();
    f.m.multi_created(ZCONNECTIONLOSS, {}, {});
    const auto out = f.m.connect_failed(make_error_code(errc::session_closed));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].what, acquire_action::kind::fail);
    EXPECT_EQ(out[0].ec, errc::session_closed);
}

// ---- a node of ours deleted -------------------------------------------------------------

TEST(AcquireMachineSet, ANodeDeletedBeforeTheGrantTakesTheOthersWithItAndQueuesAgain) {
    fixture f;
    f.wait_in_a();
    f.m.watch_fired(0, ahead_a, 1, ZOO_CHANGED_EVENT);
    f.m.session_changed(session_event::reconnected);
    EXPECT_EQ(said(f.m.listed(0, listing::fresh, ZOK, {ahead_a})),
              (words{"delete_node @1 " + ours_b + " #256", "requeue"}));
}

TEST(AcquireMachineSet, TheTokensNodeGoneBeforeTheGrantQueuesAgain) {
    fixture f;
    f.create();
    EXPECT_EQ(said(f.m.token_read(ZNONODE, {})), (words{"delete_node @1 " + ours_b + " #256", "requeue"}));
}

TEST(AcquireMachineSet, TheOwnNodesAreWatchedOnlyOnceTheHoldHasSettled) {
    fixture f;
    f.wait_in_a();
    EXPECT_EQ(said(f.m.hold_settled()), words{});  // still waiting
    EXPECT_EQ(said(f.m.watch_set(0, ahead_a, 1, ZNONODE, {})), (words{"grant " + ours_a + " #50"}));
    EXPECT_EQ(said(f.m.hold_settled()), (words{"watch_own_node " + ours_a, "watch_own_node @1 " + ours_b}));
    // A node deleted before its watch was set: the watch's read finds it gone.
    EXPECT_EQ(said(f.m.own_watch_set(1, ZNONODE)), (words{"node_gone"}));
    EXPECT_EQ(said(f.m.hold_settled()), words{});

    fixture g;
    g.wait_in_a();
    g.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    g.m.release();
    EXPECT_EQ(said(g.m.hold_settled()), words{});  // released before it settled
}

TEST(AcquireMachineSet, ARevocationRequestToAnyNodeConcernsTheSetAndIsHonouredOnlyWhenRevocable) {
    fixture f;  // not revocable: reported, kept
    f.wait_in_a();
    f.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    ASSERT_TRUE(f.m.held());
    f.m.hold_settled();
    EXPECT_EQ(said(f.m.own_watch_set(0, ZOK, "host:1", 0)), words{});
    EXPECT_EQ(said(f.m.own_watch_set(1, ZOK, "__REVOKE__", 1)), (words{"revocation_request @1 " + ours_b}));
    EXPECT_EQ(said(f.m.own_watch_set(1, ZOK, "__REVOKE__", 1)), words{});  // the same request again
    EXPECT_TRUE(f.m.held());

    auto s = two_locks();
    s.revocable = true;
    fixture g(s);
    g.wait_in_a();
    g.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    g.m.hold_settled();
    EXPECT_EQ(said(g.m.own_watch_set(0, ZOK, "__REVOKE__", 1)), (words{"revoke " + ours_a}));
    // The second node's own version count: its first request is news too.
    EXPECT_EQ(said(g.m.own_watch_set(1, ZOK, "__REVOKE__", 1)), (words{"revoke @1 " + ours_b}));
}

TEST(AcquireMachineSet, OneNodeGoneWhileHeldLosesTheSetAndTheOthersGo) {
    fixture f;
    f.wait_in_a();
    f.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    ASSERT_TRUE(f.m.held());
    EXPECT_EQ(said(f.m.own_watch_fired(0, ZOO_CHANGED_EVENT)), (words{"watch_own_node " + ours_a}));
    EXPECT_EQ(said(f.m.own_watch_fired(1, ZOO_DELETED_EVENT)), (words{"node_gone"}));
    EXPECT_EQ(said(f.m.own_watch_fired(0, ZOO_DELETED_EVENT)), words{});  // told once
    EXPECT_TRUE(f.m.node_gone());
    // The session survived: someone else deleted it.
    EXPECT_EQ(said(f.m.session_changed(session_event::reconnected)), (words{"lose " + make_error_code(errc::node_deleted).message()}));
    EXPECT_EQ(said(f.m.lost(make_error_code(errc::node_deleted))),
              (words{"forget_position", "delete_node " + ours_a + " #256"}));  // the one that went is not deleted again
}

TEST(AcquireMachineSet, ExpiryWhileHeldLosesTheSetWithNothingToDelete) {
    fixture f;
    f.wait_in_a();
    f.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    EXPECT_EQ(said(f.m.session_changed(session_event::expired)),
              (words{"lose " + make_error_code(errc::session_expired).message()}));
    EXPECT_EQ(said(f.m.lost(make_error_code(errc::session_expired))), (words{"forget_position"}));
}

TEST(AcquireMachineSet, ASuspensionLosesTheSetOnlyWhenTheSessionSaysSo) {
    fixture keeps;
    keeps.wait_in_a();
    keeps.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    EXPECT_EQ(said(keeps.m.session_changed(session_event::suspended_too_long)), words{});
    auto s = two_locks();
    s.lose_on_suspension = true;
    fixture loses(s);
    loses.wait_in_a();
    loses.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    EXPECT_EQ(said(loses.m.session_changed(session_event::suspended_too_long)),
              (words{"lose " + make_error_code(errc::connection_suspended).message()}));
}

// ---- release and lock-delay -----------------------------------------------------------

TEST(AcquireMachineSet, AReleaseDeletesEveryNodeWithOneMultiAndCompletesWithItsAnswer) {
    fixture f;
    f.wait_in_a();
    f.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    EXPECT_EQ(said(f.m.release()), (words{"forget_position", "delete_node " + path_a + " " + path_b + " #256 wait"}));
    EXPECT_EQ(said(f.m.own_watch_fired(0, ZOO_DELETED_EVENT)), words{});  // our own delete
    // One delete that waits: the engine's completion goes with it, and its answer completes the release.
    EXPECT_EQ(said(f.m.release()), words{});
}

TEST(AcquireMachineSet, UnderLockDelayAnUncleanHandoverInAnyQueueWaitsAndAReleaseRecordsItselfInEvery) {
    auto s = two_locks();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.m.begin();
    EXPECT_EQ(said(f.m.connected(acquire_step::create)),
              (words{"read_dir_before", "read_dir_before @1", "create " + prefix, "count_attempt",
                     "list pipelined", "list pipelined @1"}));
    f.m.dir_before_read(0, ZOK, "", node_stat{});
    f.m.dir_before_read(1, ZOK, "", node_stat{});
    f.m.multi_created(ZOK, {}, {path_a, path_b});
    f.m.listed(0, listing::pipelined, ZOK, {ahead_a, ours_a});
    f.m.listed(1, listing::pipelined, ZOK, {ours_b});
    f.m.token_read(ZOK, stat_of(50, session_a));
    EXPECT_EQ(said(f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT)),
              (words{"count_wakeup", "read_handover", "read_handover @1"}));
    // /locks/a's holder went without its release record: wait the lock-delay.
    EXPECT_EQ(said(f.m.handover_read(0, ZOK, "")), words{});
    EXPECT_EQ(said(f.m.handover_read(1, ZOK, "")), (words{"start_delay"}));
    EXPECT_EQ(said(f.m.delay_elapsed()),
              (words{"grant " + ours_a + " #50"}));
    EXPECT_EQ(said(f.m.release()),
              (words{"forget_position", "delete_node " + path_a + " " + path_b +
                                             " #256 wait record /locks/a=zklock released=5 record /locks/b=zklock "
                                             "released=2"}));
}

TEST(AcquireMachineSet, UnderLockDelayACleanHandoverEverywhereGrantsAtOnce) {
    auto s = two_locks();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.create_after_reading("zklock released=3", "zklock released=2");
    f.m.listed(0, listing::pipelined, ZOK, {ahead_a, ours_a});
    f.m.listed(1, listing::pipelined, ZOK, {ours_b});
    f.m.token_read(ZOK, stat_of(50, session_a));
    f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT);
    EXPECT_EQ(said(f.m.handover_read(0, ZOK, "zklock released=4")), words{});
    EXPECT_EQ(said(f.m.handover_read(1, ZOK, "", after_creates(released_cleanly()))),
              (words{"grant " + ours_a + " #50"}));
}

TEST(AcquireMachineSet, UnderLockDelayAGrantDecidedAgainWhileTheHandoverIsCheckedWaitsForTheCheck) {
    auto s = two_locks();
    s.rule.lock_delay = 2s;
    fixture f(s);
    f.create_after_reading("", "");
    f.m.listed(0, listing::pipelined, ZOK, {ahead_a, ours_a});
    f.m.listed(1, listing::pipelined, ZOK, {ahead_b, ours_b});
    f.m.token_read(ZOK, stat_of(50, session_a));
    f.m.watch_fired(0, ahead_a, 1, ZOO_DELETED_EVENT);
    // Two listings of /locks/b on their way: a watch's retry and a reconnect's re-check.
    EXPECT_EQ(said(f.m.watch_set(1, ahead_b, 1, ZCONNECTIONLOSS, {})), (words{"wait_connected list @1 " + from_zookeeper(ZCONNECTIONLOSS).message()}));
    EXPECT_EQ(said(f.m.connected(acquire_step::list, 1)), (words{"count_attempt", "list fresh @1"}));
    EXPECT_EQ(said(f.m.session_changed(session_event::reconnected)), (words{"count_attempt", "list fresh @1"}));
    EXPECT_EQ(said(f.m.listed(1, listing::fresh, ZOK, {ours_b})),
              (words{"position", "read_handover", "read_handover @1"}));
    EXPECT_EQ(said(f.m.listed(1, listing::fresh, ZOK, {ours_b})), (words{"position"}));
    f.m.handover_read(0, ZOK, "zklock released=4");
    EXPECT_EQ(said(f.m.handover_read(1, ZOK, "")), (words{"start_delay"}));  // /locks/b's holder left no record
    f.m.session_changed(session_event::reconnected);  // nothing to re-check: first everywhere
    EXPECT_TRUE(f.m.waiting());
    EXPECT_EQ(said(f.m.delay_elapsed()),
              (words{"grant " + ours_a + " #50"}));
    EXPECT_EQ(said(f.m.delay_elapsed()), words{});
}

TEST(AcquireMachineSet, LateRepliesToAnAttemptThatQueuedAgainAreNotHeard) {
    fixture f;
    f.send();
    EXPECT_EQ(said(f.m.session_changed(session_event::expired)), (words{"requeue"}));
    EXPECT_EQ(said(f.m.multi_created(ZOK, {}, {path_a, path_b})), words{});  // the old session's: gone with it
    EXPECT_EQ(said(f.m.listed(0, listing::pipelined, ZOK, {ours_a})), words{});
    EXPECT_EQ(said(f.m.token_read(ZOK, stat_of(50, session_a))), words{});
    EXPECT_EQ(said(f.m.connected(acquire_step::create)), words{});
    EXPECT_EQ(said(f.m.delay_elapsed()), words{});
    EXPECT_EQ(said(f.m.session_changed(session_event::expired)), words{});
}

TEST(AcquireMachineSet, ACancelWhileTheParentsAreMadeCompletesAtOnceAndTheirRepliesAreNotHeard) {
    fixture f;
    f.send();
    f.m.multi_created(ZNONODE, {ZNONODE, ZRUNTIMEINCONSISTENCY}, {});
    EXPECT_EQ(said(f.m.cancel()), (words{"cleaned_up"}));
    EXPECT_EQ(said(f.m.parents_ensured(0, ZOK, {})), words{});
    EXPECT_EQ(said(f.m.parents_ensured(1, ZOK, {})), words{});
}

TEST(AcquireMachineSet, ACancelledTransactionWhoseReplyIsLostLeavesTheGuidsDeletesToTheSession) {
    fixture f;
    f.send();
    EXPECT_EQ(said(f.m.cancel()), words{});  // connected: the reply is waited for
    f.m.session.connected = false;
    EXPECT_EQ(said(f.m.multi_created(ZCONNECTIONLOSS, {}, {})),
              (words{"delete_by_guid " + guid + " #256", "cleaned_up"}));
}

TEST(AcquireMachineSet, WhileHeldTheOwnWatchesAreSetAgainAfterTroubleAndAClosedSessionLosesTheSet) {
    fixture f;
    f.wait_in_a();
    f.m.watch_set(0, ahead_a, 1, ZNONODE, {});
    EXPECT_EQ(said(f.m.own_watch_set(1, ZCONNECTIONLOSS)), (words{"wait_connected watch_own_node @1 " + from_zookeeper(ZCONNECTIONLOSS).message()}));
    EXPECT_EQ(said(f.m.connected(acquire_step::watch_own_node, 1)), (words{"watch_own_node @1 " + ours_b}));
    EXPECT_EQ(said(f.m.session_changed(session_event::reconnected)), words{});  // nothing of ours went
    EXPECT_EQ(said(f.m.connect_failed(make_error_code(errc::session_closed))),
              (words{"lose " + make_error_code(errc::session_closed).message()}));
    EXPECT_EQ(said(f.m.session_changed(session_event::closed)),
              (words{"lose " + make_error_code(errc::session_closed).message()}));
    EXPECT_TRUE(f.m.held());  // until the engine reports the loss
    EXPECT_EQ(said(f.m.lost(make_error_code(errc::session_closed))), (words{"forget_position"}));
    EXPECT_EQ(said(f.m.release()), words{});
}

} // namespace set_acquire_tests
