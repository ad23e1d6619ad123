// The Redis and Redlock recipe's decisions, without a server.
#include "backends/redis/redlock.hpp"
#include <zklock/error.hpp>

#include <gtest/gtest.h>

namespace zklock::detail::redlock {
namespace {

using namespace std::chrono_literals;
using kind = master_reply::kind;

master_reply yes(long long fence = 1) { return {kind::yes, fence, {}}; }
master_reply no() { return {kind::no, 0, {}}; }
master_reply failed(std::error_code ec) { return {kind::failed, 0, ec}; }
master_reply lost() { return failed(make_error_code(errc::connection_loss)); }
master_reply refused() { return failed(std::make_error_code(std::errc::connection_refused)); }

TEST(Redlock, QuorumIsAMajority) {
    EXPECT_EQ(quorum(1), 1u);
    EXPECT_EQ(quorum(2), 2u);
    EXPECT_EQ(quorum(3), 2u);
    EXPECT_EQ(quorum(4), 3u);
    EXPECT_EQ(quorum(5), 3u);
}

TEST(Redlock, ValiditySubtractsElapsedTimeAndDrift) {
    EXPECT_EQ(drift(10000ms), 102ms);
    EXPECT_EQ(drift(10ms), 2ms);
    EXPECT_EQ(validity(10000ms, 500ms, drift(10000ms)), 9398ms);
    EXPECT_LT(validity(100ms, 99ms, drift(100ms)), duration::zero());
}

TEST(Redlock, TallyCountsAnswersAndKeepsTheLargestFence) {
    const auto t = tally({yes(7), no(), yes(9), lost(), refused()});
    EXPECT_EQ(t.yes, 2u);
    EXPECT_EQ(t.no, 1u);
    EXPECT_EQ(t.failed, 2u);
    EXPECT_EQ(t.fence, 9);
    EXPECT_EQ(t.first_error, errc::connection_loss);
    EXPECT_TRUE(t.undo);
}

TEST(Redlock, OnlyFailuresAfterSendingMayHaveSetTheKey) {
    EXPECT_TRUE(may_have_run(yes()));
    EXPECT_FALSE(may_have_run(no()));
    EXPECT_TRUE(may_have_run(lost()));  // sent, no reply: the script may have run
    EXPECT_TRUE(may_have_run(failed(std::make_error_code(std::errc::protocol_error))));
    EXPECT_FALSE(may_have_run(refused()));
    EXPECT_FALSE(may_have_run(failed(make_error_code(errc::session_closed))));
    EXPECT_FALSE(may_have_run(failed(make_error_code(errc::timeout))));  // connect timeout: never sent
    EXPECT_FALSE(tally({no(), refused(), no()}).undo);
    EXPECT_TRUE(tally({no(), lost(), no()}).undo);
}

TEST(Redlock, AMajorityWinsOnlyWithTimeLeft) {
    EXPECT_TRUE(won(tally({yes(), yes(), yes(), no(), lost()}), 3, 1ms));
    EXPECT_FALSE(won(tally({yes(), yes(), no(), no(), lost()}), 3, 1s));
    EXPECT_FALSE(won(tally({yes(), yes(), yes(), yes(), yes()}), 3, duration::zero()));
    EXPECT_TRUE(won(tally({yes()}), 1, 1ms));  // one Redis server
}

TEST(Redlock, ServersDownFailOrRetryUntilTheDeadline) {
    // Three of five down and no holder seen: the servers refused.
    const auto down = tally({yes(), yes(), refused(), refused(), refused()});
    EXPECT_EQ(next_step(down, 3, false, false, false, false), after_round::fail);  // lock(): no endless retry
    EXPECT_EQ(next_step(down, 3, true, false, false, false), after_round::fail);   // try_lock()
    EXPECT_EQ(next_step(down, 3, false, true, false, false), after_round::retry_on_error);  // try_lock_for()
    EXPECT_EQ(next_step(down, 3, false, true, false, true), after_round::fail);  // the service is closing
}

TEST(Redlock, RefusedCredentialsFailAtOnceAndSetNothing) {
    const auto wrong_password = failed(make_error_code(errc::auth_failed));
    const auto not_allowed = failed(make_error_code(errc::no_auth));
    EXPECT_FALSE(may_have_run(wrong_password));
    EXPECT_FALSE(may_have_run(not_allowed));
    EXPECT_FALSE(may_have_run(failed(make_error_code(errc::invalid_argument))));  // SELECT refused
    // The credentials are the reason to report, whatever failed first.
    const auto t = tally({refused(), yes(), wrong_password, refused(), yes()});
    EXPECT_EQ(t.first_error, errc::auth_failed);
    EXPECT_EQ(tally({refused(), not_allowed}).first_error, errc::no_auth);
    // Retrying until the deadline cannot help: the same credentials are refused again.
    EXPECT_EQ(next_step(t, 3, false, true, false, false), after_round::fail);
    EXPECT_EQ(next_step(tally({not_allowed}), 1, false, true, false, false), after_round::fail);
    EXPECT_EQ(next_step(tally({failed(make_error_code(errc::invalid_argument))}), 1, false, true, false, false),
              after_round::fail);
}

TEST(Redlock, AHolderMeansWaitingOrGivingUp) {
    const auto held = tally({no(), no(), no(), refused(), yes()});
    EXPECT_EQ(next_step(held, 3, false, false, false, false), after_round::retry_split_vote);
    const auto held_everywhere = tally({no(), no(), no(), no(), no()});
    EXPECT_EQ(next_step(held_everywhere, 3, false, false, false, false), after_round::wait);
    EXPECT_EQ(next_step(held_everywhere, 3, true, false, false, false), after_round::give_up);  // try_lock()
    EXPECT_EQ(next_step(held_everywhere, 3, false, true, true, false), after_round::give_up);   // deadline passed
    EXPECT_EQ(next_step(held_everywhere, 3, false, true, false, false), after_round::wait);
}

TEST(Redlock, ASplitVoteRetriesAfterAShortDelay) {
    // Two contenders took two masters each, the fifth is down: nobody has a majority.
    const auto split = tally({yes(), yes(), no(), no(), refused()});
    EXPECT_FALSE(won(split, 3, 1s));
    EXPECT_EQ(next_step(split, 3, false, false, false, false), after_round::retry_split_vote);
}

TEST(Redlock, AReleaseSucceedsWhereverTheKeyWasStillOurs) {
    EXPECT_EQ(after_release({yes()}), std::error_code());
    EXPECT_EQ(after_release({lost(), no(), yes()}), std::error_code());  // one master deleted it
    EXPECT_EQ(after_release({no()}), errc::node_deleted);                // expired or taken over
    EXPECT_EQ(after_release({no(), lost()}), errc::node_deleted);        // an answer outweighs a failure
    EXPECT_EQ(after_release({refused(), lost()}), std::errc::connection_refused);  // nobody answered: the first error
    EXPECT_EQ(after_release({}), std::error_code());
}

TEST(Redlock, RenewalNeedsAMajorityAndLossNeedsMoreThanAMinority) {
    EXPECT_EQ(after_renewal({yes(), yes(), yes(), no(), no()}, 3), renewal::extended);
    EXPECT_EQ(after_renewal({yes(), yes(), no(), no(), no()}, 3), renewal::lost);  // 3 of 5 no longer ours
    EXPECT_EQ(after_renewal({yes(), yes(), no(), no(), lost()}, 3), renewal::retry_sooner);
    EXPECT_EQ(after_renewal({lost()}, 1), renewal::retry_sooner);  // one server, unreachable
    EXPECT_EQ(after_renewal({no()}, 1), renewal::lost);            // one server, key gone (restart, expiry)
    EXPECT_EQ(after_renewal({yes()}, 1), renewal::extended);
}

} // namespace
} // namespace zklock::detail::redlock
