// The decisions of the PostgreSQL lock services (lease row, advisory lock, row
// lock FOR UPDATE, version column): pure functions over what a statement answered, no server
// involved. The backend (src/postgres) runs them and does what they say.
#pragma once


#include <string_view>

namespace zklock::detail::postgres_steps {

enum class method { lease, advisory, row, version };

/// What one acquire statement answered, as the decision needs it.
struct attempt_result {
    bool granted = false;             ///< a fencing token came back: the lock is ours
    bool failed = false;              ///< the statement failed (any error)
    bool connection_lost = false;     ///< ... because the connection broke (errc::connection_loss)
    bool canceled = false;            ///< ... with 57014 query_canceled (our cancel)
    bool lock_not_available = false;  ///< ... with 55P03 lock_not_available (FOR UPDATE NOWAIT)
    bool aborted = false;             ///< a cancel or the deadline came while it ran
    bool no_wait = false;             ///< try_lock: never wait for the holder
    bool row_missing = false;         ///< version: the read found no row for the lock (deleted by hand)
};

/// What the acquire does next.
struct after_attempt_step {
    enum class action {
        grant,             ///< the lock is held
        undo_grant,        ///< release the lock that came too late, then finish with the abort's reason
        wait_for_release,  ///< lease, version: another holder; wait for a NOTIFY (lease) or poll, jittered
        retry_new_row,     ///< row, version: the row is gone (deleted by hand); insert it again and retry
        finish,            ///< not acquired: report `report`
    } what = action::finish;
    enum class reason {
        abort,         ///< the abort's: operation_aborted for a cancel, none for the deadline
        error,         ///< the statement's error (none for an advisory try_lock that found it taken)
        not_acquired,  ///< none: a try_lock that found it taken
    } report = reason::not_acquired;
    bool rollback_first = false;   ///< row: end the open (or aborted) transaction first
    bool forget_connection = false;  ///< the connection broke: drop it before finishing

    friend bool operator==(const after_attempt_step&, const after_attempt_step&) = default;
};
after_attempt_step after_attempt(method m, const attempt_result& r) noexcept;

/// What a held lease does with the answer to one renewal (an UPDATE of its row).
enum class renewal {
    extended,     ///< our row was updated: the lease runs ttl from when the UPDATE was sent
    lost,         ///< no row of ours any more (expired and taken, or deleted): the lock is gone
    retry_soon,   ///< the statement failed or the connection is down: retry until the lease runs out
};
/// `rows`: the UPDATE's count of rows (PQcmdTuples; "0" when no result came).
renewal after_renewal(bool failed, std::string_view rows) noexcept;

/// Whether the lock is a lease that lives on the server until its TTL (the
/// lease row, and the version row's owner with its expiry): it
/// outlives its connection (the holder reconnects and renews it), while
/// advisory and row locks end with their server session. Decides what a broken
/// connection means for a holder, whether the holder renews, whether an
/// acquire in flight is cancelled on the server, and whether a failed release
/// closes the connection to end the lock.
bool lives_by_ttl(method m) noexcept;

} // namespace zklock::detail::postgres_steps
