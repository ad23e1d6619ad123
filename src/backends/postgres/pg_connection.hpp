// One libpq connection driven by Asio, for the PostgreSQL lock services and
// PostgresFence: a non-blocking connect, then statements sent one at a time
// from a queue, each with an optional deadline; LISTEN notifications and the
// connection's end reported to callbacks; a cancel of the running statement.
// Every member runs on the strand given at construction. While connected, one
// read wait is always armed. Asio never closes the socket: libpq owns it
// (release(), never close()).
#pragma once

#include <zklock/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::detail::pg {

struct result_deleter {
    void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using result = std::unique_ptr<PGresult, result_deleter>;

/// The error of a statement that failed with `sqlstate`:
///   42501 insufficient_privilege                      errc::no_auth
///   42883 undefined_function, 42P01 undefined_table   errc::no_node (not installed)
///   22023 invalid_parameter_value                     errc::invalid_argument
///   57P01-57P03, 08xxx (the server is going away)      errc::connection_loss
///   anything else: a code of the "zklock.postgres.sqlstate" category whose
///   message names the SQLSTATE.
std::error_code error_from_sqlstate(const char* sqlstate);

/// The first column of the first row of the last result, if any (text format).
std::optional<std::string> first_value(const std::vector<result>& results, int column = 0);

/// The deadline of a statement that may wait on the server as long as it takes
/// (a blocking lock statement): none.
inline constexpr std::chrono::milliseconds no_deadline{0};

class connection : public std::enable_shared_from_this<connection> {
public:
    using strand_type = boost::asio::strand<boost::asio::any_io_executor>;
    using result_callback = std::function<void(std::error_code, std::vector<result>)>;

    /// `keep_alive`: what keeps the strand's loop alive (its owner's context);
    /// a cancel request's thread holds it until it has posted its end.
    explicit connection(strand_type strand, std::shared_ptr<const void> keep_alive = {});
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// Starts connecting with `conninfo` (a libpq connection string or URI).
    /// `done` gets {} once connected, errc::no_auth (a password is needed and
    /// none was given), errc::auth_failed (refused), errc::timeout (`timeout`
    /// passed), a TLS failure (its sslmode asked for TLS or a check: the
    /// certificate's host errc::tls_wrong_host, its chain
    /// errc::tls_untrusted_server, its dates errc::tls_certificate_expired,
    /// anything else errc::tls_handshake_failed), errc::tls_required (the
    /// server refused a connection without TLS) or errc::connection_loss
    /// (anything else); connect_error() then says it in libpq's words.
    void connect(const std::string& conninfo, const std::string& app_name, std::chrono::milliseconds timeout,
                 std::function<void(std::error_code)> done);

    /// Queues `sql`: with `params` (text format, $1..$n) as one extended-protocol
    /// statement, or as a simple query (several statements) when `simple`.
    /// `done` gets every result, or the first error: a failed statement
    /// (error_from_sqlstate), errc::connection_loss when the connection broke,
    /// errc::timeout when no answer came within `timeout` (the connection is then
    /// closed: the statement may or may not have been applied; no_deadline: no
    /// such limit). Every queued callback is called exactly once, unless close()
    /// drops them.
    void query(std::string sql, std::vector<std::string> params, bool simple, std::chrono::milliseconds timeout,
               result_callback done);

    bool connected() const noexcept { return connected_; }
    /// Why the last connect failed, in libpq's words on one line (no secret);
    /// empty while none failed, or when libpq said nothing (a timeout).
    const std::string& connect_error() const noexcept { return connect_error_; }
    /// A statement is running on the server (sent, not yet answered).
    bool busy() const noexcept { return active_.has_value(); }
    /// Called after the results of a read that brought LISTEN notifications.
    void on_notify(std::function<void()> fn) { on_notify_ = std::move(fn); }
    /// Called once the connection broke (after the pending callbacks).
    void on_broken(std::function<void()> fn) { on_broken_ = std::move(fn); }
    /// Where the server's notices and warnings go (info, warn), instead of
    /// being dropped.
    void on_notice(std::function<void(log_level, const std::string&)> fn) { on_notice_ = std::move(fn); }
    /// The server as host:port (a socket directory for a Unix socket), kept
    /// after the connection ends; never the connection string.
    std::string endpoint() const;
    /// Asks the server to cancel the running statement. PQcancel blocks (it
    /// opens a connection of its own), so it runs on a thread of its own; the
    /// statements queued meanwhile are sent once every request asked has
    /// been handled by the server, so none of them is the one cancelled.
    void send_cancel();
    /// Closes the connection; queued callbacks are dropped without being called.
    void close() noexcept;
    /// Closes the connection; the statement running and the queued ones fail with `why`.
    void abort(std::error_code why) { broken(why); }

private:
    struct pending {
        std::string sql;
        std::vector<std::string> params;
        bool simple;
        std::chrono::milliseconds timeout;
        result_callback done;
        std::vector<result> results{};
    };

    void release_fd() noexcept;
    void note_endpoint();
    void fail_connect(std::error_code ec);
    void connect_step(PostgresPollingStatusType status);
    void send_next();
    void flush();
    void arm_read();
    void on_readable();
    void broken(std::error_code why);

    boost::asio::posix::stream_descriptor sd_;
    boost::asio::steady_timer timer_;  // the connect's, then the active statement's deadline
    PGconn* conn_ = nullptr;
    std::uint64_t gen_ = 0;   // of the socket wait and timer: stale completions do nothing
    std::uint64_t sent_ = 0;  // statements sent: the deadline of an answered one does nothing
    int cancels_in_flight_ = 0;  // send_cancel() requests the server has not handled yet
    std::shared_ptr<const void> keep_alive_;
    bool connected_ = false;
    bool reading_ = false;
    bool writing_ = false;
    std::function<void(std::error_code)> connect_done_;
    std::optional<pending> active_;
    std::deque<pending> queue_;
    std::function<void()> on_notify_;
    std::function<void()> on_broken_;
    std::function<void(log_level, const std::string&)> on_notice_;
    std::string endpoint_;
    std::string connect_error_;
};

} // namespace zklock::detail::pg
