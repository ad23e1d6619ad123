// zklock error codes, the zklock error category and the exception type.
//
// Every failure zklock reports is a std::error_code. Codes that come from the
// ZooKeeper server or client library are mapped one to one onto zklock::errc
// by from_zookeeper(); codes that describe lock semantics (lost, timed out,
// invalid path) are zklock's own. A cancelled operation completes with
// std::errc::operation_canceled.
#pragma once

#include <zklock/export.hpp>

#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

namespace zklock {

enum class errc {
    // --- zklock's own conditions --------------------------------------------
    invalid_path = 1,       ///< lock path refused before any server call
    timeout,                ///< a deadline of zklock's passed (connect, try_lock_for, ...); see operation_timeout
    session_expired,        ///< the server expired the session; ephemeral nodes are gone
    session_closed,         ///< the Session was closed or destroyed
    connection_suspended,   ///< connection lost for longer than the session timeout (loss policy)
    node_deleted,           ///< our lock node was deleted by someone else
    not_held,               ///< unlock/async_unlock on a lock that is not held
    already_acquiring,      ///< this lock object already holds or waits for the lock
    would_deadlock,         ///< blocking call on the thread that runs the session
    invalid_argument,       ///< a bad option or argument (not a path)
    permits_mismatch,       ///< a semaphore's participants disagree on its number of permits
    insecure_acl,           ///< the lock directory's ACL grants more than the session's ACL policy
    blocked_by_persistent_node, ///< a persistent node (not ephemeral) that never goes away by itself blocks the queue
    foreign_recipe,         ///< the path holds another library's recipe that zklock cannot share it with (a peer semaphore)
    connection_refused,     ///< every server address refused the connection (nothing listens there); compares equal to std::errc::connection_refused
    revoked,                ///< a revocable lock let go at a revocation request (include/zklock/revocation.hpp)
    tls_handshake_failed,   ///< the TLS handshake with a server failed (not a TLS port, our certificate refused, no common protocol)
    tls_untrusted_server,   ///< a server's TLS certificate does not chain to a trusted CA (TlsOptions::ca_file)
    tls_certificate_expired, ///< a server's TLS certificate has expired (or is not valid yet)
    tls_wrong_host,         ///< a server's TLS certificate does not name the host of the connect string
    tls_required,           ///< the server accepts only TLS connections and this one has none (PostgreSQL, MariaDB, etcd)

    // --- one per ZooKeeper client/server error (ZOO_ERRORS) -----------------
    system_error = 100,         ///< ZSYSTEMERROR
    runtime_inconsistency,      ///< ZRUNTIMEINCONSISTENCY
    data_inconsistency,         ///< ZDATAINCONSISTENCY
    connection_loss,            ///< ZCONNECTIONLOSS: the request may or may not have been applied
    marshalling_error,          ///< ZMARSHALLINGERROR
    unimplemented,              ///< ZUNIMPLEMENTED
    operation_timeout,          ///< ZOPERATIONTIMEOUT: the C client gave up on one request (retried by zklock; not a user deadline)
    bad_arguments,              ///< ZBADARGUMENTS
    invalid_state,              ///< ZINVALIDSTATE: the handle is dead (expired or closed)
    new_config_no_quorum,       ///< ZNEWCONFIGNOQUORUM
    reconfig_in_progress,       ///< ZRECONFIGINPROGRESS
    ssl_connection_error,       ///< ZSSLCONNECTIONERROR
    api_error,                  ///< ZAPIERROR
    no_node,                    ///< ZNONODE
    no_auth,                    ///< ZNOAUTH
    bad_version,                ///< ZBADVERSION
    no_children_for_ephemerals, ///< ZNOCHILDRENFOREPHEMERALS
    node_exists,                ///< ZNODEEXISTS
    not_empty,                  ///< ZNOTEMPTY
    invalid_callback,           ///< ZINVALIDCALLBACK
    invalid_acl,                ///< ZINVALIDACL
    auth_failed,                ///< ZAUTHFAILED
    closing,                    ///< ZCLOSING
    nothing,                    ///< ZNOTHING
    session_moved,              ///< ZSESSIONMOVED
    not_readonly,               ///< ZNOTREADONLY
    ephemeral_on_local_session, ///< ZEPHEMERALONLOCALSESSION
    no_watcher,                 ///< ZNOWATCHER
    reconfig_disabled,          ///< ZRECONFIGDISABLED
    session_closed_require_sasl_auth, ///< ZSESSIONCLOSEDREQUIRESASLAUTH
    throttled_op,               ///< ZTHROTTLEDOP: not executed, retry
    unknown_zookeeper_error,    ///< a ZooKeeper code this version of zklock does not know
};

/// The single category of every zklock::errc value ("zklock").
ZKLOCK_EXPORT const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

/// Maps a ZooKeeper C client return code (ZOK, ZNONODE, ...) to an error_code.
/// ZOK maps to the empty error_code. Every code of ZOO_ERRORS has its own errc;
/// ZSESSIONEXPIRED maps to errc::session_expired.
ZKLOCK_EXPORT std::error_code from_zookeeper(int zoo_rc) noexcept;

/// True for transient errors after which the same operation may succeed when
/// retried: connection loss, operation timeout, throttling, session moved, and
/// the C client's runtime inconsistency, marshalling and system errors (it
/// fails pending requests with them when it drops a connection).
/// False for everything else, permissions included (errc::no_auth,
/// errc::auth_failed, errc::insecure_acl).
ZKLOCK_EXPORT bool is_retryable(const std::error_code& ec) noexcept;

/// True for the errors that tell a holder its lock (or leadership) is gone:
/// session expired, connection suspended past the session timeout, node deleted,
/// session closed, and revoked (a revocable lock let go when asked).
ZKLOCK_EXPORT bool is_lock_lost(const std::error_code& ec) noexcept;

/// Exception thrown by the throwing overloads. Carries the error_code.
class ZKLOCK_EXPORT error : public std::system_error {
public:
    using std::system_error::system_error;
};

/// Throws zklock::error when ec is set.
inline void throw_if(const std::error_code& ec, const char* what) {
    if (ec) throw error(ec, what);
}
inline void throw_if(const std::error_code& ec, const std::string& what) {
    if (ec) throw error(ec, what);
}

} // namespace zklock

/// @cond
// zklock::errc converts to std::error_code.
template <> struct std::is_error_code_enum<zklock::errc> : std::true_type {};
/// @endcond
