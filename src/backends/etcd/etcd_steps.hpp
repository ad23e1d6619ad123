// The decisions of the etcd lock recipe (etcd's own concurrency.Mutex, with a
// lease per Lock): pure functions over the endpoint text, the keys, the
// server's answers and the lease's clock. No gRPC and no server involved.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace zklock::detail::etcd {

/// Where the service connects: the gRPC target and whether it speaks TLS.
struct endpoints {
    std::string target;  ///< "dns:///host:port", or "ipv4:a:p,b:q" / "ipv6:[..]:p" for address lists
    bool tls = false;    ///< https:// was given
    bool plain = false;  ///< http:// was given
    friend bool operator==(const endpoints&, const endpoints&) = default;
};

/// Parses "host:port", "http://host:port" or "https://host:port" (port 2379
/// when left out), or several of them separated by commas (all IP literals
/// then: gRPC picks the first that answers). errc::invalid_argument with a
/// reason for an empty host, a port not in 1..65535, another scheme, mixed
/// schemes, userinfo (credentials go in EtcdOptions, and the reason never
/// quotes them), a path, or several endpoints that are not all IP literals.
endpoints parse_endpoints(std::string_view text, std::error_code& ec, std::string* reason = nullptr);

/// The prefix of lock `name`'s queue: key_prefix + name + "/" (etcd's Mutex
/// appends the '/' to the prefix it is given).
std::string queue_prefix(std::string_view key_prefix, std::string_view name);
/// A contender's key: the prefix and the lease id in lowercase hex, as
/// concurrency.Mutex writes it (fmt "%x").
std::string contender_key(std::string_view prefix, std::int64_t lease);
/// The range_end that makes a Range of `prefix` cover every key starting with
/// it (the prefix with its last byte below 0xff incremented; "\0" when none is).
std::string prefix_range_end(std::string_view prefix);

/// The lease's clock: a lease is certainly alive until the send time of the
/// last answered keepalive (or grant) plus the TTL its answer gave. An answer
/// with a TTL of zero or less says the lease is gone.
struct lease_clock {
    using time_point = std::chrono::steady_clock::time_point;
    std::optional<time_point> valid_until;  ///< none before the first answer
    bool gone = false;                       ///< the server said the lease no longer exists

    /// A grant or keepalive sent at `sent` was answered with `ttl_seconds`.
    void answered(time_point sent, std::int64_t ttl_seconds) noexcept;
    /// True when the lease is gone or its time ran out at `now`.
    bool lost(time_point now) const noexcept;
};

/// After the acquire's Txn (put our key if absent; read our key or the
/// queue's first key).
enum class after_txn {
    held,   ///< our key is the queue's first: the lock is ours
    taken,  ///< another key is first and the acquire may not wait (try-lock): delete ours
    wait,   ///< another key is first: wait for the deletion of the newest key before ours
};
/// `my_revision`: our key's create revision; `first_revision`: the first
/// key's (none when the queue was empty, which cannot happen after a put but
/// is read as held, as etcd's Mutex does).
after_txn next_after_txn(std::int64_t my_revision, std::optional<std::int64_t> first_revision, bool no_wait) noexcept;

/// After a wait step (the newest key created before ours, and our own key).
enum class after_wait {
    held,        ///< no key before ours is left: the lock is ours
    watch,       ///< a key before ours is left: watch it until it is deleted
    key_gone,    ///< our own key is gone (lease expired, deleted by someone else)
};
after_wait next_after_wait(bool predecessor_found, bool own_key_present) noexcept;

/// What a gRPC status code (grpc::StatusCode's numbers) means to a lock user:
/// UNAVAILABLE and CANCELLED -> errc::connection_loss, DEADLINE_EXCEEDED ->
/// errc::operation_timeout, UNAUTHENTICATED -> errc::auth_failed,
/// PERMISSION_DENIED -> errc::no_auth, INVALID_ARGUMENT and FAILED_PRECONDITION
/// -> errc::bad_arguments, NOT_FOUND -> errc::no_node, others ->
/// errc::system_error; 0 (OK) -> {}. `message` (etcd's words, e.g.
/// "etcdserver: requested lease not found") refines: a lease not found is
/// errc::session_expired, an invalid auth token errc::auth_failed. A
/// connection gRPC could not make (UNAVAILABLE, "failed to connect to all
/// addresses") says why: a certificate that does not name the host ->
/// errc::tls_wrong_host, one that does not verify (untrusted, and expired
/// too: gRPC does not say which check failed) -> errc::tls_untrusted_server,
/// another failed handshake -> errc::tls_handshake_failed; the server closing
/// the connection before it spoke -> errc::tls_handshake_failed over TLS (`tls`:
/// it refused our certificate, or its absence), else errc::tls_required (a
/// TLS port).
std::error_code from_grpc(int code, std::string_view message, bool tls = false) noexcept;

/// True for an error after which etcd's answer is worth asking again (the
/// token expired: authenticate again; the server was unavailable).
bool token_expired(int code, std::string_view message) noexcept;

/// The keepalive period: a third of the TTL (etcd's own clients' choice), at least 100 ms.
std::chrono::milliseconds keepalive_period(std::chrono::milliseconds ttl) noexcept;

} // namespace zklock::detail::etcd
