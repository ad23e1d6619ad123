// What the SQL lock services (PostgreSQL and MySQL, each with a lease row, an
// advisory lock, a row lock held by a transaction and a version column) decide
// alike: the words of their decisions, what a renewal's answer means, which
// locks live by a TTL, and the names they hash. Pure functions, no server; each
// database's own decisions over an attempt's answer are postgres_steps' and
// mysql_steps'.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zklock::detail::sql_steps {

enum class method { lease, advisory, row, version };

/// What one acquire statement answered, as the decisions need it (a database
/// leaves false what it cannot tell).
struct attempt_result {
    bool granted = false;             ///< a fencing token came back: the lock is ours
    bool failed = false;              ///< the statement failed (any error)
    bool connection_lost = false;     ///< ... because the connection broke (errc::connection_loss)
    bool canceled = false;            ///< ... because it was cancelled (our cancel, or an operator's)
    bool busy = false;                ///< ... with a duplicate key (lease: held by another)
    bool lock_not_available = false;  ///< ... because FOR UPDATE NOWAIT found the row locked (or a lock wait timed out)
    bool deadlock = false;            ///< ... as a deadlock's victim (concurrent inserts of one key)
    bool aborted = false;             ///< a cancel or the deadline came while it ran
    bool no_wait = false;             ///< try_lock: never wait for the holder
    bool row_missing = false;         ///< row, version: the lock's row is gone (deleted by hand)
};

/// What the acquire does next.
struct after_attempt_step {
    enum class action {
        grant,             ///< the lock is held
        undo_grant,        ///< release the lock that came too late, then finish with the abort's reason
        wait_for_release,  ///< lease, version: another holder; wait for a notification or poll, jittered
        retry,             ///< try again at once (a server wait that ended without the lock, a lost race)
        retry_new_row,     ///< row, version: the row is gone; insert it again and retry
        finish,            ///< not acquired: report `report`
    } what = action::finish;
    enum class reason {
        abort,         ///< the abort's: operation_aborted for a cancel, none for the deadline
        error,         ///< the statement's error (none where a try_lock found the lock taken)
        not_acquired,  ///< none: a try_lock that found it taken
    } report = reason::not_acquired;
    bool rollback_first = false;     ///< row: end the open (or aborted) transaction first
    bool forget_connection = false;  ///< the connection broke: drop it before finishing

    friend bool operator==(const after_attempt_step&, const after_attempt_step&) = default;
};

/// What a held lease does with the answer to one renewal (an UPDATE of its row).
enum class renewal {
    extended,    ///< our row matched: the lease runs ttl from when the UPDATE was sent
    lost,        ///< no row of ours any more (expired and taken, or deleted): the lock is gone
    retry_soon,  ///< the statement failed or the connection is down: retry until the lease runs out
};
/// `matched`: how many rows the UPDATE matched.
renewal after_renewal(bool failed, std::uint64_t matched) noexcept;

/// Whether the lock lives on the server until its TTL (the lease row, and the
/// version row's owner with its expiry): it outlives its connection (the holder
/// reconnects and renews it), while advisory and row locks end with their
/// server session. Decides what a broken connection means for a holder,
/// whether the holder renews, and whether a failed release closes the
/// connection to end the lock.
bool lives_by_ttl(method m) noexcept;

/// A fencing token from a statement's first value: a positive integer (a
/// sequence's or a version's); 0 for anything else (none, NULL, not a number).
std::int64_t token_of(std::optional<std::string_view> value) noexcept;

/// Sixteen hex digits of a 64-bit FNV-1a hash of `name`: a fixed-length key for
/// a lock name (PostgreSQL's NOTIFY channel, MySQL's GET_LOCK name of a long
/// name). Its offset basis, 1469598103934665603, is not FNV's standard one;
/// it stays, since every client of a lock must compute the same key.
std::string hashed_name(std::string_view name);

} // namespace zklock::detail::sql_steps
