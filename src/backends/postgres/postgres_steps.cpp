#include "backends/postgres/postgres_steps.hpp"

namespace zklock::detail::postgres_steps {

after_attempt_step after_attempt(method m, const attempt_result& r) noexcept {
    using action = after_attempt_step::action;
    using reason = after_attempt_step::reason;
    if (r.connection_lost) return {action::finish, r.aborted ? reason::abort : reason::error, false, true};
    if (r.granted) return r.aborted ? after_attempt_step{action::undo_grant, reason::abort} : after_attempt_step{action::grant};
    const bool cancelled_by_us = r.aborted && (r.canceled || !r.failed);
    switch (m) {
    case method::version:
        // Not granted without an error: the read found the row held, or another
        // client's UPDATE moved the version between our read and our UPDATE.
        // Both are "busy", as the lease's conflict is; no transaction is open.
        if (r.row_missing && !r.failed && !r.aborted) return {action::retry_new_row, reason::not_acquired, false};
        [[fallthrough]];
    case method::lease:
        if (r.failed) return {action::finish, reason::error};
        if (r.aborted) return {action::finish, reason::abort};
        if (r.no_wait) return {action::finish, reason::not_acquired};
        return {action::wait_for_release};
    case method::advisory:
        if (cancelled_by_us) return {action::finish, reason::abort};
        return {action::finish, reason::error};  // a try_lock that found it taken: no error
    case method::row:
        // Not granted: the transaction (if any) is open or aborted; roll it back.
        if (!r.failed && !r.aborted) return {action::retry_new_row, reason::not_acquired, true};
        if (cancelled_by_us) return {action::finish, reason::abort, true};
        if (r.lock_not_available && r.no_wait) return {action::finish, reason::not_acquired, true};
        return {action::finish, reason::error, true};
    }
    return {action::finish, reason::error};
}

} // namespace zklock::detail::postgres_steps
