// zklock::EtcdLockService: locks on etcd (v3 API over gRPC) behind the
// backend-neutral zklock::Lock, with etcd's own recipe (clientv3/concurrency
// Mutex), so that zklock's etcd locks and Go's queue together on one prefix.
//
// The recipe (docs/design.md, "etcd"):
//   lease    each Lock grants itself a lease (ttl) at its first acquire and
//            keeps it alive (a keepalive every ttl/3 on the service's one
//            keepalive stream) until the Lock or the service ends: two Locks
//            on one name in one process never share a key (two Go Mutexes
//            on one Session do, and both hold).
//   acquire  one Txn: if the key <prefix>/<lease id in hex> has create
//            revision 0, put it (attached to the lease) and read the queue's
//            first key (lowest create revision); else read our key and the
//            first. Ours first: held, the create revision is the fencing token.
//   wait     read the newest key created before ours (and our own), watch its
//            deletion on the service's one watch stream, read again; no key
//            before ours left: held. Each waiter watches one key (no herd).
//   release  delete our key (the lease stays for the next acquire).
//   loss     the lease reported gone (a keepalive answered with TTL 0), our
//            key deleted while waiting, or no keepalive answered within the
//            lease's TTL counted from the send time of the last answered one
//            (one failed keepalive is not a loss). safe_until() is that time.
//   try-lock, timeout, cancel: our key is deleted before the next acquire of
//            the same Lock starts; a failure revokes the lease.
//
// Key prefix: EtcdOptions::key_prefix + name, e.g. "zklock/job/" holds the
// contenders of lock "job"; etcd's Go Mutex on prefix "zklock/job" and
// `etcdctl lock zklock/job` queue on it too.
//
// Guarantees and limits (compare docs/comparison.md): FIFO by create revision,
// one waiter woken per release, fencing tokens (create revisions) that grow
// across leader changes (etcd's revision is Raft-replicated); a dead holder's
// lock is free when its lease runs out (ttl); a holder paused past its ttl
// learns of the loss when it runs again, before which its writes need the
// token (a fenced resource) to be refused.
//
// Authentication: EtcdOptions::user and password (etcd's Authenticate; the
// token it returns goes with every call and is asked for again when etcd
// says it expired). The password is never logged or put in an error message.
// TLS: EtcdOptions::tls (zklock::TlsOptions, as SessionOptions::tls): the CA
// file, a client certificate and its key (private like an auth file) for a
// server started with --client-cert-auth, the server name check on by
// default. An "https://" endpoint or TLS options select TLS; "http://" with
// TLS options is refused.
//
// Errors: acquire fails with errc::connection_loss (no server answered),
// errc::operation_timeout (a call did not finish within request_timeout),
// errc::auth_failed (wrong user or password, or authentication needed),
// errc::no_auth (the user may not write the prefix), errc::session_expired
// (the lease ran out while waiting) or errc::node_deleted (our key was deleted
// while waiting); over TLS errc::tls_untrusted_server (the server's
// certificate does not verify against tls.ca_file: another CA's, or expired,
// as gRPC does not say which check failed), errc::tls_wrong_host (it does not
// name the host), errc::tls_handshake_failed (any other failed handshake: a
// plain server, our certificate refused, or none given where the server asks
// for one); without TLS errc::tls_required (the server closed the connection
// before it spoke, as a TLS port does). Each fails the call at once, as an
// unreachable server does; try_lock_for() retries them until its deadline. lock() does not retry; try_lock_for() retries until its
// deadline and then reports the last error.
//
// Threads: gRPC's completions are handed to a thread of the service's own;
// completions go to `executor` when given, else to that thread. Destroy the
// Locks before their service.
#pragma once

#include <zklock/etcd/export.hpp>
#include <zklock/lock.hpp>
#include <zklock/log.hpp>
#include <zklock/tls_options.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace zklock {

namespace detail {
struct etcd_context;
}

/// Options of EtcdLockService.
struct EtcdOptions {
    /// Each Lock's lease: how long a lock outlives a holder that stopped
    /// sending keepalives, in whole seconds (rounded up; at least 2 s; etcd
    /// may raise it to its minimum). Default 10 s.
    std::chrono::milliseconds ttl{10000};
    /// How long one connection attempt may take (gRPC's minimum connect
    /// timeout). A call made while no connection is up fails at once with
    /// errc::connection_loss. Default 5 s.
    std::chrono::milliseconds connect_timeout{5000};
    /// A call with no answer within this fails with errc::operation_timeout. Default 5 s.
    std::chrono::milliseconds request_timeout{5000};
    /// Prepended to every lock name. Default "zklock/".
    std::string key_prefix = "zklock/";
    /// etcd's user (auth enabled); empty (default): no authentication.
    std::string user;
    /// The user's password (never printed). Default empty.
    std::string password;
    /// TLS to the endpoints (see zklock/tls_options.hpp): on when a field is
    /// set or the endpoints say https://. `ca_file` signs the server's
    /// certificate (empty: the system's roots); `cert_file` and `key_file`
    /// (private: mode 600) a client certificate, for servers started with
    /// --client-cert-auth; `verify_host` (default true) checks that the
    /// certificate names the endpoint's host; `insecure` checks nothing (tests
    /// only). Checked by validate_tls() at construction. Default: off.
    TlsOptions tls;
    /// Where completions go when a handler names no executor; empty (default):
    /// the service's own thread.
    boost::asio::any_io_executor executor;
    /// The service's log, records with source "etcd" up to `log.level`: a
    /// stream that broke (warn), a lock lost (error). Default: none.
    log_sink log;
};

/// Locks on an etcd cluster (see the top of this file for the recipe).
/// capabilities(): backend "etcd", FIFO, dead holder released at ttl expiry,
/// fencing tokens, the server wakes one waiter, reports loss.
class ZKLOCK_ETCD_EXPORT EtcdLockService : public LockService {
public:
    /// `endpoints`: "host:port", "http://host:port", "https://host:port"
    /// (port 2379 when left out), or several IP literals separated by commas.
    /// Throws zklock::error (errc::invalid_argument) for a malformed endpoint,
    /// a ttl under 2 s, a password without a user, TLS files validate_tls()
    /// refuses (unreadable, a key without its certificate, a key file group or
    /// others may read) or "http://" endpoints with TLS options.
    /// Connects lazily: an unreachable server shows at the first acquire.
    explicit EtcdLockService(const std::string& endpoints, EtcdOptions options = {});
    /// Ends the live Locks (each revokes its lease, which deletes its key),
    /// waits for the calls in flight (at most request_timeout), and closes.
    ~EtcdLockService() override;
    EtcdLockService(const EtcdLockService&) = delete;
    EtcdLockService& operator=(const EtcdLockService&) = delete;

    /// Throws zklock::error(errc::invalid_path) for a bad name (validate_lock_name).
    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;

    /// The prefix of lock `name`'s contenders' keys under `key_prefix`
    /// ("zklock/" + "job" -> "zklock/job/").
    static std::string prefix_for(std::string_view key_prefix, std::string_view name);

private:
    std::shared_ptr<detail::etcd_context> context_;
};

} // namespace zklock
