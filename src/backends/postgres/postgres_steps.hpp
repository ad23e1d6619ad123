// The decisions of the PostgreSQL lock services (lease row, advisory lock, row
// lock FOR UPDATE, version column): pure functions over what a statement answered, no server
// involved. The backend (src/postgres) runs them and does what they say.
#pragma once

#include "backends/sql/sql_steps.hpp"

namespace zklock::detail::postgres_steps {

// The words of the decisions (method, attempt_result, after_attempt_step, ...) are the SQL engine's.
using namespace sql_steps;

/// PostgreSQL's answer to an attempt: `canceled` is 57014 query_canceled (our
/// cancel), `lock_not_available` 55P03 (FOR UPDATE NOWAIT). The decisions never
/// ask for a retry at once: a lease or version found taken waits for a NOTIFY
/// (lease) or polls.
after_attempt_step after_attempt(method m, const attempt_result& r) noexcept;

} // namespace zklock::detail::postgres_steps
