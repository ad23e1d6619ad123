// zklock's PostgreSQL comparison backends: a TTL lease row, a session advisory
// lock, a row lock held in an open transaction and the optimistic version
// column, each on the Lock interface.
#pragma once

#include <zklock/lock.hpp>
#include <zklock/log.hpp>
#include <zklock/postgres/connection_options.hpp>
#include <zklock/postgres/export.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace zklock {

namespace detail {
struct postgres_context;
}

/// Options of the PostgreSQL lock services (all four): the connections'
/// (PostgresConnectionOptions: executor, connect timeout) and these.
struct PostgresOptions : PostgresConnectionOptions {
    /// Lease and version services: the lease's (the owner's expiry's) time-to-live
    /// on the server's clock. Default 10 s.
    std::chrono::milliseconds lease_ttl{10000};
    /// Lease and version services: how often a held lease is renewed. Default 0: lease_ttl / 3.
    std::chrono::milliseconds renew_interval{0};
    /// The service's log, records with the backend's name as source
    /// ("postgres-lease", "postgres-advisory", "postgres-row", "postgres-version") up to `log.level`:
    /// a lock's connection made and the server's notices (info), a connect that
    /// failed, a connection lost, the server's warnings (warn), a lock lost
    /// (error). Servers are named host:port, never with the connection string
    /// or its password. The callback runs on the service's strand (its own
    /// thread, or `executor`), with the threading rules of zklock::log_sink.
    /// Default: none.
    log_sink log;
};

/// What the four services share: the connection string, the options, the
/// thread. Not used directly.
class ZKLOCK_POSTGRES_EXPORT PostgresLockServiceBase : public LockService {
public:
    ~PostgresLockServiceBase() override;
    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;



protected:
    /// The ways of locking in PostgreSQL (lease row, advisory lock, SELECT ... FOR UPDATE, version column).
    enum class method { lease, advisory, row, version };
    /// A service of method `m` on `conninfo` (its password never reaches output or argv).
    /// TLS is libpq's, set in `conninfo` and passed as given: sslmode
    /// (verify-full checks the chain and the host name), sslrootcert, sslcert,
    /// sslkey, sslpassword (a secret, redacted like the password). A refused
    /// connect fails with errc::tls_wrong_host, errc::tls_untrusted_server
    /// (libpq 15 says an expired certificate so too: "certificate verify
    /// failed"), errc::tls_handshake_failed (a server
    /// without TLS, a file libpq cannot load, ...) or errc::tls_required
    /// (pg_hba.conf refuses a connection without TLS), libpq's words in
    /// failure_detail(); a conninfo libpq cannot read (a bad sslmode) with
    /// errc::invalid_argument.
    PostgresLockServiceBase(method m, std::string conninfo, PostgresOptions options);

private:
    std::shared_ptr<detail::postgres_context> context_;
};

/// "postgres-lease": a lease row with a time-to-live (the SQL cousin of Redis SET NX PX).
///
/// Table `zklock_leases(name, owner, fence, expires_at)` and sequence `zklock_fence`,
/// created on first use (CREATE ... IF NOT EXISTS under a transaction advisory lock).
/// Acquire is one statement: an INSERT ... ON CONFLICT DO UPDATE that takes the
/// row only when it is absent or expired; expiry is judged on the server's clock
/// alone (now()). The fencing token is nextval('zklock_fence'). While held, the
/// lease is renewed every renew_interval (UPDATE ... WHERE owner = us); an update
/// that finds no row of ours reports errc::node_deleted, and a lease that could
/// not be renewed before its TTL ran out (as measured from when the last successful
/// renewal was sent) reports errc::session_expired. Release deletes the row only
/// when we own it and sends pg_notify on the lock's channel in the same statement.
/// Waiters LISTEN on that channel and retry on each notification (every waiter
/// wakes: a herd), and also retry with jittered backoff, because an expired lease
/// sends no notification. Grants are not FIFO.
/// Each Lock object has its own connection (for its LISTEN); a dead holder's
/// lease is freed when its TTL runs out.
class ZKLOCK_POSTGRES_EXPORT PostgresLeaseLockService : public PostgresLockServiceBase {
public:
    /// Leases on `conninfo` (libpq connection string or URI); see PostgresOptions.
    PostgresLeaseLockService(std::string conninfo, PostgresOptions options = {});
};

/// "postgres-advisory": a session advisory lock, pg_advisory_lock(key), where the
/// key is hashtextextended(name, 0) computed by the server (a 64-bit hash: two
/// names can share a key, which only makes them exclude each other).
///
/// Each Lock object has its own connection: an advisory lock belongs to the
/// server session that took it, and is released when that connection ends (a
/// dead holder frees the lock as soon as the server sees its connection close).
/// Waiting is `SELECT pg_advisory_lock(key)`: the server queues waiters in its
/// lock manager, grants in arrival order and wakes one waiter per release.
/// try_lock uses pg_try_advisory_lock. A deadline or a cancellation sends a
/// cancel request (PQcancel); if the lock was granted before the cancel landed, it
/// is unlocked before the acquire completes, so nothing stays behind. The fencing
/// token is nextval('zklock_fence') taken after the grant. The holder is told
/// errc::session_expired when its connection ends (terminated by an operator,
/// server restart, network failure): the server has released the lock by then.
class ZKLOCK_POSTGRES_EXPORT PostgresAdvisoryLockService : public PostgresLockServiceBase {
public:
    /// Advisory locks on `conninfo`; see PostgresOptions.
    PostgresAdvisoryLockService(std::string conninfo, PostgresOptions options = {});
};

/// "postgres-row": the classic `BEGIN; SELECT ... FROM zklock_rows WHERE name = $1
/// FOR UPDATE` held in an open transaction for the whole critical section (the row
/// is inserted first with ON CONFLICT DO NOTHING). The fencing token is
/// nextval('zklock_fence') stored into the row in the same transaction (UPDATE ...
/// RETURNING fence): a sequence, because a dead holder's transaction rolls back and
/// a `fence + 1` counter would hand the same token to the next holder.
/// Release is COMMIT. Each Lock object has its own connection and, while it holds
/// the lock, one open transaction (which holds back VACUUM's horizon: keep critical
/// sections short). try_lock uses FOR UPDATE NOWAIT. A dead holder's lock is freed
/// when its connection ends; the holder is told errc::session_expired. Waiters
/// queue in the server; a newcomer can occasionally overtake the first waiter at
/// the moment of release, so grants are not strictly FIFO.
class ZKLOCK_POSTGRES_EXPORT PostgresRowLockService : public PostgresLockServiceBase {
public:
    /// Row locks on `conninfo`; see PostgresOptions.
    PostgresRowLockService(std::string conninfo, PostgresOptions options = {});
};

/// "postgres-version": the optimistic lock on a version column, as applications
/// write it without a lock service.
///
/// Table `zklock_versions(name, owner, version, expires_at)`, created on first
/// use; each lock's row is inserted once (ON CONFLICT DO NOTHING). Acquire reads
/// the version of a free row (no owner, or an owner whose expiry passed on the
/// server's clock), then sends `UPDATE ... SET owner = us, version = version + 1,
/// expires_at = now() + lease_ttl WHERE name = $1 AND (owner IS NULL OR
/// expires_at < now()) AND version = $2 RETURNING version` (with the version read as $2): the
/// lock is ours when it changed one row, and the new version is the fencing token
/// (it grows by one per grant of that lock, as durable as the database). A busy
/// row or a lost race (another client moved the version first) is "busy": waiters
/// poll with jittered backoff up to every min(lease_ttl / 4, 500 ms), since a
/// release tells nobody. While held, the expiry is renewed every renew_interval
/// (UPDATE ... WHERE owner = us AND version = ours); a renewal that finds no such
/// row reports errc::node_deleted, a lease not renewed before its TTL ran out
/// errc::session_expired. Release clears the owner when the version is still
/// ours. Grants are not FIFO. Each Lock object has its own connection; a dead
/// holder's lock is freed when its expiry passes.
class ZKLOCK_POSTGRES_EXPORT PostgresVersionLockService : public PostgresLockServiceBase {
public:
    /// Version-column locks on `conninfo`; see PostgresOptions.
    PostgresVersionLockService(std::string conninfo, PostgresOptions options = {});
};

} // namespace zklock
