// zklock::PostgresFence: a PostgreSQL resource that refuses stale lock holders.
//
// Values live in the table zklock_fenced(resource text PRIMARY KEY,
// fencing_token bigint, value bytea, updated_at timestamptz) and are written by
// the SQL function zklock_fenced_write(resource, token, value), which applies a
// write only when its token is greater than or equal to the one stored with the
// row, in one statement (INSERT ... ON CONFLICT DO UPDATE ... WHERE stored <=
// token): concurrent writers are serialized on the row, the row keeps the value
// of the highest token whatever their order, and the late write of a holder
// that was paused past its session timeout is refused once a later holder has
// written. The table and the function are in zklock_fence.sql (installed to
// share/zklock/; install_sql() returns its text): run it with psql, or let
// install() (or the first connection, see PostgresFenceOptions::install) do it.
// The .sql file also shows the same rule on a table of your own (a
// fencing_token column and a conditional UPSERT or UPDATE).
//
//   zklock::PostgresFence fence("host=db1 dbname=app user=svc");   // password: PGPASSFILE, ~/.pgpass, ...
//   std::unique_lock hold(lock);                                   // any zklock lock
//   auto r = fence.write("orders-42", lock.fencing_token(), payload);
//   if (!r.applied) { /* refused: token r.stored_token is newer; our lock was lost */ }
//
// Tokens: positive (what zklock hands out); one resource must only ever see
// tokens from one source (one ZooKeeper ensemble, or one backend's counter).
// Under REPEATABLE READ or SERIALIZABLE a write that races another can fail
// with a serialization error (SQLSTATE 40001): retry it.
//
// Errors (std::error_code, or zklock::error from the throwing forms):
//   errc::invalid_argument   a token under 1, or an empty resource (before any I/O)
//   errc::no_auth            the server wants a password and none was given, or
//                            the role may not use the table or function (42501)
//   errc::auth_failed        the server refused the password
//   errc::no_node            the table or function is missing (install() not run
//                            and PostgresFenceOptions::install off)
//   errc::timeout            no connection within connect_timeout, or no answer
//                            within command_timeout (the connection is dropped: a
//                            write may or may not have been applied)
//   errc::connection_loss    the connection broke (same caveat)
//   errc::session_closed     the fence is being destroyed
//   errc::would_deadlock     a blocking call on the fence's own I/O thread
//   other server errors      a code whose message names the SQLSTATE
// A refused stale write is none of these: it is a result with applied == false.
//
// Threads: the fence runs one connection (opened on first use, opened again
// after a failure) on a strand of `executor`, or on its own thread when none is
// given. Members may be called from any thread; operations run one at a time
// in the order they were started. Asynchronous operations support no
// cancellation (a statement runs to its end or its deadline); destroy the
// fence after they completed. Secrets: zklock never prints the conninfo.
#pragma once

#include <zklock/error.hpp>
#include <zklock/fencing.hpp>
#include <zklock/postgres/connection_options.hpp>
#include <zklock/postgres/export.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace zklock {

namespace detail {
struct postgres_fence_state;
}

/// Options of a PostgresFence: its connection's (PostgresConnectionOptions:
/// executor, connect timeout) and these.
struct PostgresFenceOptions : PostgresConnectionOptions {
    /// How long one statement may take. Default 10 s.
    std::chrono::milliseconds command_timeout{10000};
    /// Default true: when the connection opens and zklock_fenced_write() is
    /// missing, run install_sql() (needs CREATE on the schema). false for a
    /// role that may only use what an administrator installed.
    bool install = true;
};

/// Writes values that only the current lock holder may change (see the top of this file).
class ZKLOCK_POSTGRES_EXPORT PostgresFence {
public:
    /// `conninfo`: a libpq connection string or URI ("host=... dbname=...",
    /// "postgresql://user@host/db"); the password as libpq finds it. Connects
    /// lazily. Throws zklock::error(errc::invalid_argument) for timeouts under 1 ms.
    explicit PostgresFence(std::string conninfo, PostgresFenceOptions options = {});
    ~PostgresFence();
    PostgresFence(const PostgresFence&) = delete;
    PostgresFence& operator=(const PostgresFence&) = delete;

    /// Writes `value` to `resource` when `token` is >= the token stored with it
    /// (or none is): applied, and the row records `token`. Otherwise nothing is
    /// written: applied false, stored_token the newer token. One statement,
    /// `SELECT * FROM zklock_fenced_write($1, $2, $3)`.
    fenced_write_result write(std::string_view resource, std::int64_t token, std::string_view value);
    /// As above; errors in `ec` instead of thrown.
    fenced_write_result write(std::string_view resource, std::int64_t token, std::string_view value,
                              std::error_code& ec);
    /// Handler: void(std::error_code, fenced_write_result). No cancellation.
    template <class CompletionToken>
    auto async_write(std::string_view resource, std::int64_t token, std::string_view value, CompletionToken&& t) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, fenced_write_result)>(
            [this](auto handler, std::string r, std::int64_t k, std::string v) {
                async_write_impl(std::move(r), k, std::move(v), std::move(handler));
            },
            t, std::string(resource), token, std::string(value));
    }

    /// The value of `resource` and the token that wrote it; nullopt when never written.
    std::optional<fenced_value> read(std::string_view resource);
    /// As above; errors in `ec` instead of thrown.
    std::optional<fenced_value> read(std::string_view resource, std::error_code& ec);
    /// Handler: void(std::error_code, std::optional<fenced_value>). No cancellation.
    template <class CompletionToken> auto async_read(std::string_view resource, CompletionToken&& t) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, std::optional<fenced_value>)>(
            [this](auto handler, std::string r) { async_read_impl(std::move(r), std::move(handler)); }, t,
            std::string(resource));
    }

    /// Runs install_sql() (CREATE TABLE IF NOT EXISTS, CREATE OR REPLACE
    /// FUNCTION) in one transaction, serialized with other installers by a
    /// transaction advisory lock. Idempotent. Needs CREATE on the schema (and to
    /// own the function when it exists).
    void install();
    /// As above; errors in `ec` instead of thrown.
    void install(std::error_code& ec);
    /// Handler: void(std::error_code). No cancellation.
    template <class CompletionToken> auto async_install(CompletionToken&& t) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_install_impl(std::move(handler)); }, t);
    }

    /// The text of zklock_fence.sql: the table and the function.
    static std::string_view install_sql() noexcept;

private:
    void async_write_impl(std::string resource, std::int64_t token, std::string value,
                          boost::asio::any_completion_handler<void(std::error_code, fenced_write_result)> handler);
    void
    async_read_impl(std::string resource,
                    boost::asio::any_completion_handler<void(std::error_code, std::optional<fenced_value>)> handler);
    void async_install_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);

    std::shared_ptr<detail::postgres_fence_state> state_;
};

} // namespace zklock
