// zklock::Session: one ZooKeeper session driven by an Asio executor.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/error.hpp>
#include <zklock/export.hpp>
#include <zklock/log.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace zklock {

namespace detail {
class session_impl;
struct internal_access;
}

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
};

/// The state of a Session.
enum class session_state {
    connecting, ///< no session established yet (or a new one after expiry)
    connected,  ///< connected; the session is alive
    suspended,  ///< connection lost; the session may still be alive on the server
    closed,     ///< close() was called or the server refused the session for good
};

/// What happened to a Session; delivered to subscribers in order.
enum class session_event {
    connected,          ///< a (new) session is established; `session_id` is its id
    suspended,          ///< connection lost, the client is reconnecting
    reconnected,        ///< connection re-established within the session timeout: same session
    suspended_too_long, ///< suspended for longer than the negotiated session timeout
    expired,            ///< the server expired the session; a new one is being opened
    closed,             ///< the session was closed
};

ZKLOCK_EXPORT const char* to_string(session_state s) noexcept;
ZKLOCK_EXPORT const char* to_string(session_event e) noexcept;

/// Keeps a subscribe() callback registered; unregisters it when destroyed.
class ZKLOCK_EXPORT Subscription {
public:
    Subscription() = default;
    /// Moves the subscription; the moved-from object unsubscribes nothing.
    Subscription(Subscription&&) noexcept = default;
    /// Moves the subscription; the target's own is cancelled first.
    Subscription& operator=(Subscription&&) noexcept = default;
    ~Subscription();
    /// Unsubscribes now (the callback is not called after this returns).
    void reset() noexcept;

private:
    friend class Session;
    std::weak_ptr<detail::session_impl> impl_;
    std::uint64_t id_ = 0;
};

/// One ZooKeeper session.
///
/// All ZooKeeper I/O runs on a strand of the session's executor: the single-threaded
/// ZooKeeper C client's socket is waited on with Asio and every C callback runs on
/// that strand. User completion handlers are posted to the handler's associated
/// executor (default: the session's executor), never run inside a C callback.
///
/// When the server expires the session, the Session reports `expired` to every
/// subscriber (every lock held through it reports loss), throws the dead handle
/// away and opens a new session by itself.
///
/// Thread-safety: every member may be called from any thread. Destroying a Session
/// closes it: the server deletes its ephemeral nodes at once, so locks still held
/// through it are released (and reported lost to their holders).
class ZKLOCK_EXPORT Session {
public:
    /// The executor the Session's completions run on (Asio's executor_type).
    using executor_type = boost::asio::any_io_executor;

    /// A Session that runs its own io_context on one internal thread.
    /// Starts connecting at once; connect() waits for the connection.
    /// Throws zklock::error (errc::invalid_argument, with the reason) for bad
    /// options: a session_timeout of zero or less or above INT_MAX ms, a negative
    /// connect_timeout, malformed auth entries, an empty ACL, or an `auth` ACL
    /// entry without any auth.
    explicit Session(SessionOptions options = {});

    /// A Session on the caller's executor; someone must run that executor.
    /// Throws like the first constructor.
    /// Blocking members (connect(), Mutex::lock(), ...) then need a thread that
    /// runs the executor other than the caller.
    Session(executor_type executor, SessionOptions options = {});

    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session();

    /// Waits until connected, for at most options().connect_timeout.
    /// Errors: errc::timeout (no server answered in time), errc::session_closed,
    /// errc::invalid_argument (bad connect string), errc::would_deadlock (called on the
    /// thread that runs the session).
    void connect();
    /// As above; errors in `ec` instead of thrown.
    void connect(std::error_code& ec);

    /// Completes when connected or at options().connect_timeout.
    /// Signature: void(std::error_code). Cancellation: terminal, partial and total
    /// (the session keeps connecting; only the wait is cancelled).
    template <class CompletionToken>
    auto async_connect(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_connect_impl(std::move(handler)); }, token);
    }

    /// Closes the session: the server deletes its ephemeral nodes at once; pending
    /// operations complete with errc::session_closed. Idempotent. A Session with its
    /// own thread is closed when close() returns; on a caller-supplied executor the
    /// close runs on that executor (at once when called from the session's own
    /// handlers, otherwise the next time the executor runs).
    void close() noexcept;

    /// The session's state now (connecting, connected, suspended, closed).
    session_state state() const noexcept;
    /// The current session id (0 before the first connection).
    std::int64_t session_id() const noexcept;
    /// The session timeout the server granted (0 before the first connection).
    std::chrono::milliseconds negotiated_timeout() const noexcept;
    /// The options the Session was made with (credentials included: never print them).
    const SessionOptions& options() const noexcept;
    /// The identities the session authenticates as, without secrets
    /// ("digest:alice"; "anyone (no authentication)" without auth).
    std::string identity() const;
    /// The executor of the Session's completions (the one given, or its own thread's).
    executor_type get_executor() const noexcept;

    /// Calls `callback` on the session's strand for every session event until the
    /// returned Subscription is destroyed. The callback must not block.
    [[nodiscard]] Subscription subscribe(std::function<void(session_event, std::int64_t session_id)> callback);

private:
    friend struct detail::internal_access;  // the recipes and fixtures reach impl_
    void async_connect_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);

    std::shared_ptr<detail::session_impl> impl_;
};

} // namespace zklock
