// zklock::SessionOptions: what a Session is made with (servers, timeouts,
// credentials, ACL policy, log, TLS). A plain aggregate, without Asio.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/log.hpp>
#include <zklock/tls_options.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace zklock {

/// Options of a Session. An aggregate: set what you need, the rest keeps its default.
struct SessionOptions {
    /// Comma-separated host:port list with an optional chroot suffix,
    /// e.g. "10.0.0.1:2181,10.0.0.2:2181/app". Default: a local server.
    std::string connect = "127.0.0.1:2181";
    /// Requested session timeout. The server clamps it to [2, 20] x its tickTime;
    /// negotiated_timeout() tells what was granted. Default 10 s.
    std::chrono::milliseconds session_timeout{10000};
    /// Deadline of connect() / async_connect(). Default 15 s.
    std::chrono::milliseconds connect_timeout{15000};
    /// Loss policy: when the connection stays suspended for longer than the
    /// negotiated session timeout, every lock held through this session is
    /// reported lost (errc::connection_suspended) even before the server says the
    /// session expired, because the server may already have given the lock to
    /// someone else. Default on; turn off only if the protected resource checks
    /// fencing tokens.
    bool lose_locks_on_suspension = true;
    /// The session's log: the C client's messages about this session's connection
    /// and zklock's own events (connected, suspended, reconnected, expired,
    /// closed, a lock lost, a request retried after a connection loss), each up to `log.level`, to `log.callback` (see
    /// log_sink for its threading). Default: no callback.
    log_sink log;
    /// Without a log callback: the C client's messages about this session up to
    /// this level (0 = none, 1 = error ... 4 = debug) go to stderr, as the C
    /// client prints them. zklock reports every failure as an error_code, so the
    /// default is none. The C client formats only up to its process-wide level
    /// (default info; see set_zookeeper_client_log_level), which no Session changes.
    int client_log_level = 0;
    /// Authentications added to every connection of the session, before its first
    /// request, and again on the new handle after an expiry (zoo_add_auth).
    /// Typically one `{"digest", "user:password"}`. A scheme the server has no
    /// provider for (or that it refuses) closes the session at once with
    /// errc::auth_failed. Digest accepts any password: a wrong one shows up as
    /// errc::no_auth on the first protected directory. Default: none (anyone).
    std::vector<auth_entry> auth;
    /// ACL of every node zklock creates through this session: the lock node, its
    /// directory and the container parents above it (a lock may override it, see
    /// MutexOptions::acl). With anything but the open policy, an acquire also
    /// reads the lock directory's ACL and fails with errc::insecure_acl when it
    /// grants more than this policy (a directory someone else created open).
    /// Default: acls::open_unsafe() (world:anyone:cdrwa: no protection).
    acl_list acl = acls::open_unsafe();
    /// The server's jute.maxbuffer: node data (MutexOptions::node_data, a
    /// participant id) that would make a create larger than this is refused with
    /// errc::invalid_argument before any server call. Default 0xfffff, the server's default.
    std::size_t max_request_bytes = 0xfffff;
    /// TLS to the servers' secure client ports (see TlsOptions): with it on,
    /// `connect` names those ports. Default: off (plain TCP).
    TlsOptions tls;
};

} // namespace zklock
