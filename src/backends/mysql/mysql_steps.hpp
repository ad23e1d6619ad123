// The decisions of the MySQL-protocol lock services (lease row, GET_LOCK,
// SELECT ... FOR UPDATE, optimistic version row): pure functions over what a
// statement answered, no server involved. The backend (my_backend.hpp) runs
// them and does what they say.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>

namespace zklock::detail::mysql_steps {

enum class method { lease, advisory, row, version };

/// The error of a statement or connect that failed with the server's or the
/// client library's error number:
///   1045 access denied (wrong user or password)          errc::auth_failed
///   1044, 1142, 1143, 1227 no permission                  errc::no_auth
///   1146 no such table, 1049 no such database             errc::no_node
///   1054 unknown column                                   errc::invalid_argument (a table of the wrong shape)
///   2002, 2003, 2006, 2013, 2055, 1927, 1053 (gone)       errc::connection_loss
///   anything else: a code of the "zklock.mysql" category whose value is the
///   number and whose message names it.
std::error_code error_from_mysql(unsigned number);
/// The "zklock.mysql" category.
const std::error_category& mysql_category() noexcept;

/// Server errors the decisions tell apart.
inline constexpr unsigned er_dup_entry = 1062;         ///< lease: another holder's row
inline constexpr unsigned er_lock_wait_timeout = 1205;  ///< row: NOWAIT (MariaDB) or a wait that timed out
inline constexpr unsigned er_lock_nowait = 3572;        ///< row: NOWAIT (MySQL 8)
inline constexpr unsigned er_query_interrupted = 1317;  ///< KILL QUERY (by an operator)
inline constexpr unsigned er_lock_deadlock = 1213;      ///< InnoDB chose this statement as a deadlock's victim

/// What one acquire statement answered, as the decision needs it.
struct attempt_result {
    bool granted = false;             ///< a fencing token came back: the lock is ours
    bool failed = false;              ///< the statement failed (any error)
    bool connection_lost = false;     ///< ... because the connection broke (errc::connection_loss)
    bool canceled = false;            ///< ... with 1317 query interrupted (a KILL QUERY)
    bool busy = false;                ///< ... with 1062 duplicate entry (lease: held by another)
    bool lock_not_available = false;  ///< ... with 1205 / 3572 (row: FOR UPDATE NOWAIT, or a wait timeout)
    bool deadlock = false;            ///< ... with 1213: InnoDB rolled the statement back (concurrent inserts of one key)
    bool aborted = false;             ///< a cancel or the deadline came while it ran
    bool no_wait = false;             ///< try_lock: never wait for the holder
    bool row_missing = false;         ///< row, version: the lock's row is gone (deleted by hand)
};

/// What the acquire does next.
struct after_attempt_step {
    enum class action {
        grant,             ///< the lock is held
        undo_grant,        ///< release the lock that came too late, then finish with the abort's reason
        wait_for_release,  ///< lease, version: another holder; poll again after a jittered backoff
        retry,             ///< try again at once (a server wait that ended without the lock, a lost race)
        retry_new_row,     ///< row, version: the row is gone; insert it again and retry
        finish,            ///< not acquired: report `report`
    } what = action::finish;
    enum class reason {
        abort,         ///< the abort's: operation_aborted for a cancel, none for the deadline
        error,         ///< the statement's error
        not_acquired,  ///< none: a try_lock that found it taken
    } report = reason::not_acquired;
    bool rollback_first = false;     ///< row: end the open transaction first
    bool forget_connection = false;  ///< the connection broke: drop it before finishing

    friend bool operator==(const after_attempt_step&, const after_attempt_step&) = default;
};
after_attempt_step after_attempt(method m, const attempt_result& r) noexcept;

/// version: what the read of the row says (its version, and whether it is
/// free: no owner, or the owner's lease expired on the server's clock).
struct version_read {
    bool row_found = false;
    std::int64_t version = 0;
    bool free = false;
};
/// The read's answer: "version|free" columns of one row (free "1"/"0"), or none.
version_read read_version(std::optional<std::string_view> version, std::optional<std::string_view> free) noexcept;

/// What a held lease does with the answer to one renewal (an UPDATE of its row).
enum class renewal {
    extended,    ///< our row matched: the lease runs ttl from when the UPDATE was sent
    lost,        ///< no row of ours any more (expired and taken, or deleted): the lock is gone
    retry_soon,  ///< the statement failed or the connection is down: retry until the lease runs out
};
/// `matched`: the UPDATE's matched rows (the connection asks for found rows).
renewal after_renewal(bool failed, std::uint64_t matched) noexcept;

/// Whether the lock lives on the server until its TTL (lease, version): it
/// outlives its connection (the holder reconnects and renews it), while
/// GET_LOCK and row locks end with their connection.
bool lives_by_ttl(method m) noexcept;

/// Whether an acquire statement may wait on the server (GET_LOCK, FOR UPDATE):
/// a cancel or deadline then ends the connection (and its session) instead.
bool waits_on_server(method m) noexcept;

} // namespace zklock::detail::mysql_steps
