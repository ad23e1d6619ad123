// The decisions of the MySQL-protocol lock services (lease row, GET_LOCK,
// SELECT ... FOR UPDATE, optimistic version row): pure functions over what a
// statement answered, no server involved. The backend (my_backend.cpp) runs
// them and does what they say.
#pragma once

#include "backends/sql/sql_steps.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>

namespace zklock::detail::mysql_steps {

// The words of the decisions (method, attempt_result, after_attempt_step, ...) are the SQL engine's.
using namespace sql_steps;

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
/// The error of a connect that failed with `number` and the client's
/// `message`: for 2026 (TLS), by the message, errc::tls_wrong_host
/// ("Validation of SSL server certificate failed": the host name),
/// errc::tls_certificate_expired, errc::tls_untrusted_server (the chain:
/// "self-signed certificate", "unable to get local issuer certificate",
/// "certificate verify failed"), errc::tls_handshake_failed (anything else);
/// 3159 (MySQL's require_secure_transport) errc::tls_required; otherwise
/// error_from_mysql(number).
std::error_code error_from_connect(unsigned number, std::string_view message);
/// The "zklock.mysql" category.
const std::error_category& mysql_category() noexcept;

/// Server errors the decisions tell apart.
inline constexpr unsigned er_dup_entry = 1062;         ///< lease: another holder's row
inline constexpr unsigned er_lock_wait_timeout = 1205;  ///< row: NOWAIT (MariaDB) or a wait that timed out
inline constexpr unsigned er_lock_nowait = 3572;        ///< row: NOWAIT (MySQL 8)
inline constexpr unsigned er_query_interrupted = 1317;  ///< KILL QUERY (by an operator)
inline constexpr unsigned er_lock_deadlock = 1213;      ///< InnoDB chose this statement as a deadlock's victim

/// MySQL's answer to an attempt: `canceled` is 1317 (an operator's KILL
/// QUERY), `busy` 1062, `lock_not_available` 1205 or 3572, `deadlock` 1213.
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

/// Whether an acquire statement may wait on the server (GET_LOCK, FOR UPDATE):
/// a cancel or deadline then ends the connection (and its session) instead.
bool waits_on_server(method m) noexcept;

} // namespace zklock::detail::mysql_steps
