// zklock's MySQL-protocol comparison backends (MySQL, MariaDB): a lease row
// with a UNIQUE name, GET_LOCK, SELECT ... FOR UPDATE held in an open
// transaction, and an optimistic version row, each on the Lock interface.
#pragma once

#include <zklock/lock.hpp>
#include <zklock/log.hpp>
#include <zklock/mysql/export.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace zklock {

namespace detail {
struct mysql_context;
}

/// Options of the MySQL-protocol lock services (all four).
struct MysqlOptions {
    /// Where the I/O runs. Default: none, the service runs its own io_context
    /// on one thread (the blocking calls then refuse to run there). Each Lock's
    /// connection also runs the client library's blocking calls on a thread of
    /// its own.
    boost::asio::any_io_executor executor{};
    /// How long opening one connection (TCP, handshake, schema check) may take.
    /// Default 10 s; a connect that takes longer fails with errc::timeout.
    std::chrono::milliseconds connect_timeout{10000};
    /// The user, for an address that names none. Default empty.
    std::string user;
    /// The password, for an address that gives none. Never printed, logged or
    /// put on a command line. Default empty: none.
    std::string password;
    /// Lease and version services only: the lease's time-to-live on the
    /// server's clock. Default 10 s.
    std::chrono::milliseconds lease_ttl{10000};
    /// Lease and version services only: how often a held lease is renewed.
    /// Default 0: lease_ttl / 3.
    std::chrono::milliseconds renew_interval{0};
    /// The service's log, records with the backend's name as source
    /// ("mysql-lease", "mysql-advisory", "mysql-row", "mysql-version") up to
    /// `log.level`: a lock's connection made (info), a connect that failed, a
    /// connection lost (warn), a lock lost (error). Servers are named
    /// host:port, never with the address's password. The callback runs on the
    /// service's strand, with the threading rules of zklock::log_sink.
    /// Default: none.
    log_sink log;
};

/// What the four services share: the address, the options, the thread. Not
/// used directly.
class ZKLOCK_MYSQL_EXPORT MysqlLockServiceBase : public LockService {
public:
    ~MysqlLockServiceBase() override;
    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;

protected:
    /// The four ways of locking with a MySQL-protocol server.
    enum class method { lease, advisory, row, version };
    /// A service of method `m` on `address`: "mysql://[user[:password]@]host[:port][/database]"
    /// or "host=H port=P user=U password=W database=D socket=S" (database
    /// default "zklock"). TLS (MariaDB Connector/C's): the keys ssl_mode,
    /// ssl_ca, ssl_cert, ssl_key in the key=value form, or as URL parameters
    /// ("mysql://u@h/db?ssl_mode=verify_identity&ssl_ca=/etc/ca.pem"); files
    /// are PEM, the key unencrypted and private (checked as TlsOptions's are).
    /// ssl_mode (any case): disabled (the default without any ssl_ key),
    /// required (TLS; the certificate checked only against an ssl_ca given),
    /// verify_ca (its chain, against ssl_ca), verify_identity (also the host
    /// name; the default once a file is given; without ssl_ca the system's
    /// CAs). A refused connect fails with errc::tls_untrusted_server,
    /// errc::tls_wrong_host, errc::tls_certificate_expired,
    /// errc::tls_handshake_failed (a server without TLS, ...) or
    /// errc::tls_required (MySQL's require_secure_transport; MariaDB's says
    /// errc::auth_failed, and failure_detail() then names TLS). Throws
    /// zklock::error(errc::invalid_argument) for an address that cannot be
    /// read or a TLS file that is missing or not private (the message never
    /// holds the password).
    MysqlLockServiceBase(method m, const std::string& address, MysqlOptions options);

private:
    std::shared_ptr<detail::mysql_context> context_;
};

/// "mysql-lease": a lease row in `zklock_leases(name PRIMARY KEY, owner, fence,
/// expires_at)`. Acquire sweeps the name's expired row (DELETE ... WHERE
/// expires_at < NOW(6): the server's clock), INSERTs its own row (a duplicate
/// key means another holds it) and draws the fencing token from the sequence
/// `zklock_fence` once the row is its own. While held, the lease is renewed
/// every renew_interval (an UPDATE matching owner = us); one that matches no
/// row reports errc::node_deleted, a lease not renewed before its TTL ran out
/// reports errc::session_expired. Release DELETEs the own row. MySQL has no
/// notifications: waiters poll with a jittered backoff (a herd; not FIFO). A
/// dead holder's lease is freed when its TTL runs out.
class ZKLOCK_MYSQL_EXPORT MysqlLeaseLockService : public MysqlLockServiceBase {
public:
    /// Leases on `address`; see MysqlOptions.
    MysqlLeaseLockService(const std::string& address, MysqlOptions options = {});
};

/// "mysql-advisory": `GET_LOCK(name, timeout)` / `RELEASE_LOCK(name)` on the
/// Lock's own connection (the name is "zklock:" + the lock's name, or a hash
/// when that is longer than 64 characters). The server makes waiters wait and
/// frees the lock when the connection ends; the holder is told
/// errc::session_expired then. A deadline or cancel ends the Lock's
/// connection (and so the wait, or a grant that came first); the next acquire
/// connects again. The fencing token is NEXTVAL of the
/// sequence `zklock_fence` drawn once GET_LOCK answered 1.
class ZKLOCK_MYSQL_EXPORT MysqlAdvisoryLockService : public MysqlLockServiceBase {
public:
    /// GET_LOCK locks on `address`; see MysqlOptions.
    MysqlAdvisoryLockService(const std::string& address, MysqlOptions options = {});
};

/// "mysql-row": `START TRANSACTION; SELECT ... FROM zklock_rows WHERE name = ?
/// FOR UPDATE` held in an open transaction for the whole critical section
/// (InnoDB; name is the PRIMARY KEY, so the lock is one index record; without
/// such an index InnoDB would lock every record it scans). The row is inserted
/// first when missing. The token is NEXTVAL(zklock_fence) written into the row
/// in the same transaction; release is COMMIT. try_lock uses FOR UPDATE NOWAIT.
/// A dead holder's lock is freed when its connection ends (the transaction
/// rolls back); the holder is told errc::session_expired. A deadline or
/// cancel ends the Lock's connection, as for mysql-advisory.
class ZKLOCK_MYSQL_EXPORT MysqlRowLockService : public MysqlLockServiceBase {
public:
    /// Row locks on `address`; see MysqlOptions.
    MysqlRowLockService(const std::string& address, MysqlOptions options = {});
};

/// "mysql-version": the optimistic lock on a row of `zklock_versions(name
/// PRIMARY KEY, owner, version, expires_at)`: read the version, then `UPDATE
/// ... SET owner = us, version = version + 1, expires_at = NOW(6) + ttl WHERE
/// name = ? AND (owner IS NULL OR expires_at < NOW(6)) AND version = v` (v: the version read);
/// one matched row means the lock is ours, and the new version is the fencing
/// token. Renewal and release (owner = NULL) match the version held. Waiters
/// poll with a jittered backoff; a dead holder's lease is freed at its TTL.
class ZKLOCK_MYSQL_EXPORT MysqlVersionLockService : public MysqlLockServiceBase {
public:
    /// Version-row locks on `address`; see MysqlOptions.
    MysqlVersionLockService(const std::string& address, MysqlOptions options = {});
};

} // namespace zklock
