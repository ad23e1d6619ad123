// The PostgreSQL lock services' decisions, without a server.
#include "backends/postgres/postgres_steps.hpp"

#include <gtest/gtest.h>

namespace zklock::detail::postgres_steps {
namespace {

using action = after_attempt_step::action;
using reason = after_attempt_step::reason;

attempt_result granted() { return {.granted = true}; }
attempt_result taken() { return {}; }  // no token, no error
attempt_result failed() { return {.failed = true}; }
attempt_result canceled() { return {.failed = true, .canceled = true}; }
attempt_result broken() { return {.failed = true, .connection_lost = true}; }
attempt_result aborted(attempt_result r) {
    r.aborted = true;
    return r;
}
attempt_result no_wait(attempt_result r) {
    r.no_wait = true;
    return r;
}

constexpr method all[] = {method::lease, method::advisory, method::row, method::version};

TEST(PostgresSteps, AGrantIsKeptUnlessAnAbortCameFirst) {
    for (const auto m : all) {
        EXPECT_EQ(after_attempt(m, granted()), (after_attempt_step{action::grant})) << int(m);
        EXPECT_EQ(after_attempt(m, aborted(granted())), (after_attempt_step{action::undo_grant, reason::abort})) << int(m);
    }
}

TEST(PostgresSteps, ABrokenConnectionIsDroppedAndReportsTheAbortIfOneCame) {
    for (const auto m : all) {
        EXPECT_EQ(after_attempt(m, broken()), (after_attempt_step{action::finish, reason::error, false, true})) << int(m);
        EXPECT_EQ(after_attempt(m, aborted(broken())), (after_attempt_step{action::finish, reason::abort, false, true}))
            << int(m);
    }
}

TEST(PostgresSteps, ALeaseHeldByAnotherIsWaitedForUnlessTryLock) {
    EXPECT_EQ(after_attempt(method::lease, taken()).what, action::wait_for_release);
    EXPECT_EQ(after_attempt(method::lease, no_wait(taken())), (after_attempt_step{action::finish, reason::not_acquired}));
    EXPECT_EQ(after_attempt(method::lease, aborted(taken())), (after_attempt_step{action::finish, reason::abort}));
    // A lease statement is never cancelled on the server: its error is reported, abort or not.
    EXPECT_EQ(after_attempt(method::lease, aborted(failed())), (after_attempt_step{action::finish, reason::error}));
}

TEST(PostgresSteps, AnAdvisoryLockReportsOurCancelAsTheAbort) {
    EXPECT_EQ(after_attempt(method::advisory, aborted(canceled())), (after_attempt_step{action::finish, reason::abort}));
    EXPECT_EQ(after_attempt(method::advisory, aborted(taken())), (after_attempt_step{action::finish, reason::abort}));
    EXPECT_EQ(after_attempt(method::advisory, aborted(failed())), (after_attempt_step{action::finish, reason::error}));
    EXPECT_EQ(after_attempt(method::advisory, canceled()), (after_attempt_step{action::finish, reason::error}));
    // try_lock found it taken: no token and no error, reported as the (empty) error.
    EXPECT_EQ(after_attempt(method::advisory, no_wait(taken())), (after_attempt_step{action::finish, reason::error}));
}

TEST(PostgresSteps, ARowLockRollsBackBeforeEveryOutcomeButAGrant) {
    EXPECT_EQ(after_attempt(method::row, taken()), (after_attempt_step{action::retry_new_row, reason::not_acquired, true}));
    EXPECT_EQ(after_attempt(method::row, aborted(canceled())), (after_attempt_step{action::finish, reason::abort, true}));
    EXPECT_EQ(after_attempt(method::row, aborted(taken())), (after_attempt_step{action::finish, reason::abort, true}));
    attempt_result nowait_taken{.failed = true, .lock_not_available = true, .no_wait = true};
    EXPECT_EQ(after_attempt(method::row, nowait_taken), (after_attempt_step{action::finish, reason::not_acquired, true}));
    nowait_taken.no_wait = false;
    EXPECT_EQ(after_attempt(method::row, nowait_taken), (after_attempt_step{action::finish, reason::error, true}));
    EXPECT_EQ(after_attempt(method::row, failed()), (after_attempt_step{action::finish, reason::error, true}));
}

// The version column: a busy row or a lost race (nothing updated) is waited
// for by polling, as the lease's conflict is; a row deleted by hand is made
// again without a rollback (no transaction is open).
TEST(PostgresSteps, AVersionLockPollsWhenBusyAndRemakesAMissingRow) {
    EXPECT_EQ(after_attempt(method::version, taken()).what, action::wait_for_release);
    EXPECT_EQ(after_attempt(method::version, no_wait(taken())), (after_attempt_step{action::finish, reason::not_acquired}));
    EXPECT_EQ(after_attempt(method::version, aborted(taken())), (after_attempt_step{action::finish, reason::abort}));
    EXPECT_EQ(after_attempt(method::version, failed()), (after_attempt_step{action::finish, reason::error}));
    attempt_result missing{.row_missing = true};
    EXPECT_EQ(after_attempt(method::version, missing),
              (after_attempt_step{action::retry_new_row, reason::not_acquired, false}));
    missing.no_wait = true;  // even a try_lock: the row's absence says nothing about a holder
    EXPECT_EQ(after_attempt(method::version, missing).what, action::retry_new_row);
    EXPECT_EQ(after_attempt(method::version, aborted(missing)), (after_attempt_step{action::finish, reason::abort}));
}

} // namespace
} // namespace zklock::detail::postgres_steps
