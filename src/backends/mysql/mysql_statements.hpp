// The SQL of the MySQL-protocol lock services, built by pure functions: one
// place to read each recipe. Lock names are validated ([A-Za-z0-9._-]) and
// owners are hex, so quoting them is safe without a connection to escape them.
// Several statements in one string run in one round trip (the connection asks
// for multi-statements); the server stops at the first that fails.
//
// Tables (InnoDB; made on first use with CREATE ... IF NOT EXISTS):
//   zklock_fence     a SEQUENCE: the lease's and the row lock's fencing tokens
//   zklock_leases    mysql-lease:   name PRIMARY KEY, owner, fence, expires_at
//   zklock_rows      mysql-row:     name PRIMARY KEY (so FOR UPDATE locks one index record), fence, holder
//   zklock_versions  mysql-version: name PRIMARY KEY, owner, version, expires_at
#pragma once

#include "backends/mysql/mysql_steps.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace zklock::detail::mysql_sql {

using mysql_steps::method;

/// What an acquire, renewal or release statement is made of.
struct lock_args {
    const std::string& name;       ///< the lock's name (validated)
    const std::string& owner;      ///< this attempt's random owner id (lease, version)
    std::chrono::milliseconds ttl; ///< the lease's time-to-live (lease, version)
    bool no_wait = false;          ///< try_lock
    std::int64_t version = 0;      ///< version: the version read (attempt) or held (renew, release)
};

/// `s` as an SQL string literal ('...' with ' and \ escaped).
std::string literal(const std::string& s);

/// GET_LOCK's name for lock `name`: "zklock:" + name, or when that is longer
/// than the server allows (64 characters) "zklock#" + a 64-bit hash in hex.
std::string advisory_key(const std::string& name);

/// Run on every new connection, in three steps. session(): the session's
/// settings (READ COMMITTED, no idle timeout, row lock waits without a timeout
/// of their own) and a last value that counts the objects `m` needs that
/// exist. Only when fewer than objects_needed(m) exist, create(): the sequence
/// and `m`'s table (CREATE ... IF NOT EXISTS waits for the metadata lock that
/// any open transaction which used them holds, e.g. a row lock's holder: so
/// it is not run when they exist). Then verify(): a last value that counts the
/// unique indexes made of the name column alone (1 when the table has the
/// right shape; a missing column fails the statement with 1054).
std::string session(method m);
std::string objects_needed(method m);
std::string create(method m);
std::string verify(method m);

/// What verify()'s last value must be.
inline constexpr const char* verify_ok = "1";

/// row, version: whether the lock's row exists (a consistent read, no lock),
/// and the statement that inserts it when it does not.
std::string row_exists(method m, const std::string& name);
std::string insert_row(method m, const std::string& name);

/// The acquire statement(s). Its last value is the fencing token when the lock
/// is ours (lease, advisory, row); none or NULL when it is not. version: the
/// read, whose row is "version|free" (read_version).
std::string attempt(method m, const lock_args& a);

/// version: the conditional update after a read that found the row free at
/// a.version; one matched row means the lock is ours with token a.version + 1.
std::string version_take(const lock_args& a);

/// lease, version: extends the held lease by its ttl (one matched row: still ours).
std::string renew(method m, const lock_args& a);

/// Gives the lock back (on the connection that holds it).
std::string release(method m, const lock_args& a);

/// row: ends a transaction left open by an attempt that did not get the lock.
inline constexpr const char* rollback = "ROLLBACK";

} // namespace zklock::detail::mysql_sql
