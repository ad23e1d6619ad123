// One MySQL-protocol connection (MariaDB Connector/C) for the mysql-* lock
// services, with the shape of the PostgreSQL backend's: a connect, then
// statements run one at a time from a queue, each answered on the strand; the
// connection's end reported to a callback; a cancel of the running statement.
//
// The client library's calls block, so each connection runs them on a thread
// of its own, which owns the MYSQL handle; the strand only queues work and
// receives answers. While idle and connected, that thread polls the socket: a
// server that closes the connection (KILL, shutdown, a cut network) is seen
// at once, as the PostgreSQL backend's armed read sees it. The protocol has
// no cancel request, and a `KILL QUERY` cannot be aimed at one statement (one
// that arrives late interrupts the next), so a statement is cancelled by
// closing: close() shuts the socket down, which ends a call blocked on it,
// and, if a statement was running, sends `KILL <id>` over a short connection
// of its own (on a thread of its own), so that the server's session ends with
// whatever it waited for, held or had open.
// Every member runs on the strand given at construction.
#pragma once

#include "backends/mysql/mysql_address.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::detail::mysql {

/// One statement's answer: its rows (text; NULL as nullopt) and, for a
/// statement without rows, how many rows it matched.
struct result {
    std::vector<std::vector<std::optional<std::string>>> rows;
    std::uint64_t affected = 0;
};

/// The first column of the first row of the last result, if any and not NULL.
std::optional<std::string> last_value(const std::vector<result>& results, std::size_t column = 0);

struct connection_state;

class connection : public std::enable_shared_from_this<connection> {
public:
    using strand_type = boost::asio::strand<boost::asio::any_io_executor>;
    /// (error, every result so far, the server's message of the error).
    using result_callback = std::function<void(std::error_code, std::vector<result>, std::string)>;

    /// `owner` is kept alive while a statement is outstanding: it must own the
    /// strand's execution context (or be null when the caller's context
    /// outlives the connection).
    connection(strand_type strand, std::shared_ptr<void> owner);
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// Starts connecting to `address`. `done` gets {} once connected, the
    /// mapped error (mysql_steps::error_from_mysql: errc::auth_failed for a
    /// refused password, errc::connection_loss for no server, ...) and the
    /// client's message (never holding the password), or errc::timeout when
    /// `timeout` passed first.
    void connect(const mysql_address& address, std::chrono::milliseconds timeout,
                 std::function<void(std::error_code, std::string)> done);

    /// Queues `sql` (several statements allowed). `done` gets every result, or
    /// the first error (mysql_steps::error_from_mysql; errc::connection_loss when
    /// the connection broke) with the results of the statements before it.
    /// Every queued callback is called exactly once, unless close() drops them.
    /// Until its answer is posted, the statement counts as work of the strand's
    /// execution context, as an Asio operation does: run() does not return
    /// under it, and a service's end waits for it (and otherwise closes).
    void query(std::string sql, result_callback done);

    bool connected() const noexcept { return connected_; }
    /// A statement is running on the server (sent, not yet answered).
    bool busy() const noexcept { return active_ > 0; }
    /// Called once the connection broke (after the pending callbacks).
    void on_broken(std::function<void()> fn) { on_broken_ = std::move(fn); }
    /// The server as host:port (or its socket path); never the password.
    std::string endpoint() const { return endpoint_.empty() ? "the server" : endpoint_; }
    /// The server's id of this connection (CONNECTION_ID()), 0 before connected.
    unsigned long server_id() const noexcept { return server_id_; }
    /// Closes the connection; queued callbacks are dropped without being called.
    void close() noexcept;

private:
    void post_answer(std::function<void()> fn);

    strand_type strand_;
    std::shared_ptr<void> owner_;
    boost::asio::steady_timer timer_;  // the connect's deadline
    std::shared_ptr<connection_state> state_;
    mysql_address address_;
    std::uint64_t gen_ = 0;  // bumped by close(): answers of an older generation do nothing
    bool connected_ = false;
    unsigned active_ = 0;
    unsigned long server_id_ = 0;
    std::function<void(std::error_code, std::string)> connect_done_;
    std::deque<result_callback> pending_;  // the queued statements' callbacks, in order
    std::function<void()> on_broken_;
    std::string endpoint_;
};

} // namespace zklock::detail::mysql
