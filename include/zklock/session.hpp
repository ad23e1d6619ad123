// zklock::Session: one ZooKeeper session driven by an Asio executor.
#pragma once

#include <zklock/error.hpp>
#include <zklock/export.hpp>
#include <zklock/session_options.hpp>
#include <zklock/session_state.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace zklock {

namespace detail {
class session_impl;
struct session_access;
}

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
    /// Errors: errc::timeout (no server answered in time),
    /// errc::connection_refused (every address of the connect string refused
    /// the connection: nothing listens there; said as soon as each has, not at
    /// the deadline; the session keeps trying, and a later wait may succeed.
    /// It relies on the C client's log, which set_zookeeper_client_log_level()
    /// at none silences: the wait then ends at the deadline), errc::session_closed,
    /// errc::invalid_argument (bad connect string), errc::would_deadlock (called on the
    /// thread that runs the session).
    void connect();
    /// As above; errors in `ec` instead of thrown.
    void connect(std::error_code& ec);

    /// Completes when connected, when every address refused the connection
    /// (errc::connection_refused, as connect()), or at options().connect_timeout.
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
    friend struct detail::session_access;  // the engines, recipes and the testing seam reach impl_
    void async_connect_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);

    std::shared_ptr<detail::session_impl> impl_;
};

} // namespace zklock
