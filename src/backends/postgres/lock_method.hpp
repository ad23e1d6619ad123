// One PostgreSQL lock method's SQL and description: the lease row
// (lease_method.cpp), the session advisory lock (advisory_method.cpp), the
// row lock held by an open transaction (row_method.cpp) and the optimistic
// version column (version_method.cpp). The backend (pg_backend.cpp) runs the
// same protocol for all four; what differs between them is here and in
// postgres_steps.
#pragma once

#include "backends/postgres/postgres_steps.hpp"
#include <zklock/lock.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail::pg {

/// A statement for pg::connection::query: with `params` ($1..$n, extended
/// protocol), or several statements as one simple query when `simple`.
struct statement {
    std::string sql;
    std::vector<std::string> params;
    bool simple = false;
};

/// What an acquire statement is made of.
struct attempt_args {
    const std::string& name;          ///< the lock's name (validated: [A-Za-z0-9._-])
    const std::string& owner;         ///< this attempt's random owner id (lease)
    const std::string& ttl_interval;  ///< the lease's ttl as an interval, e.g. "30000 milliseconds"
    bool no_wait;                     ///< try_lock
    std::string_view observed{};      ///< version: what read() answered for this attempt (the version seen free)
    std::int64_t token = 0;           ///< renew: the held lock's fencing token
};

class lock_method {
public:
    virtual ~lock_method() = default;

    virtual postgres_steps::method kind() const noexcept = 0;
    virtual lock_capabilities capabilities() const noexcept = 0;
    /// The connection's application_name starts with it, then the lock's name.
    virtual const char* application_prefix() const noexcept = 0;
    /// The tables it needs, created inside the setup transaction ("" for none).
    virtual std::string create_tables_sql() const { return {}; }
    /// Run after the setup transaction, on the same connection ("" for nothing).
    virtual std::string after_setup_sql(const std::string& /*channel*/) const { return {}; }
    /// A statement that must have succeeded once before the first attempt (and
    /// again after an attempt found the lock's row gone); none by default.
    virtual std::optional<statement> prepare(const std::string& /*name*/) const { return std::nullopt; }
    /// A statement sent before each attempt, whose first value becomes the
    /// attempt's `observed` (the version method's read of the version): the
    /// text `held` when the lock is taken (the attempt is not sent), no row
    /// when the lock's row is gone. None by default.
    virtual std::optional<statement> read(const std::string& /*name*/) const { return std::nullopt; }
    /// The acquire statement: its first value is the fencing token when the
    /// lock is ours, NULL or no row when it is not.
    virtual statement attempt(const attempt_args& a) const = 0;
    /// Extends a held lease by its ttl (one row updated: still ours); none for
    /// a lock that does not live by a ttl.
    virtual std::optional<statement> renew(const attempt_args& /*a*/) const { return std::nullopt; }
    /// Gives the lock back (on the connection that holds it); `token` is the
    /// held lock's fencing token.
    virtual statement release(const std::string& name, const std::string& owner, const std::string& channel,
                              std::int64_t token) const = 0;

};

const lock_method& lease_method() noexcept;
const lock_method& advisory_method() noexcept;
const lock_method& row_method() noexcept;
const lock_method& version_method() noexcept;

} // namespace zklock::detail::pg
