// What the Locks of one SQL lock service (PostgreSQL's or MySQL's) share, as
// their engine (sql_lock) needs it: the method and what it promises, the lease
// settings, the log, the strand and thread they run on, and the live locks,
// which the service's end closes. Each database's context adds its address and
// options (postgres_context, mysql_context).
#pragma once

#include "backends/sql/sql_steps.hpp"
#include "support/async_support.hpp"

#include <zklock/lock.hpp>
#include <zklock/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace zklock::detail::sql {

class sql_lock;

/// The settings every SQL lock service has (its options' common fields).
struct lease_settings {
    std::chrono::milliseconds lease_ttl;
    std::chrono::milliseconds renew_interval;  ///< 0: lease_ttl / 3
    log_sink log;
    boost::asio::any_io_executor executor;  ///< none: the service runs a thread of its own
};

/// What an SQL method promises: loss reported, a fencing token as durable as
/// the database; a lease (lives_by_ttl) freed by its expiry and waking nobody
/// in particular, an advisory or row lock freed with its holder's connection,
/// the server waking one waiter. `notified`: the server tells waiters of a
/// release (a server wait, or PostgreSQL's NOTIFY to a lease's waiters).
lock_capabilities sql_capabilities(const char* backend, sql_steps::method m, bool fair_fifo, bool notified,
                                   const char* limits) noexcept;

struct sql_context {
    std::shared_ptr<own_context> own;
    boost::asio::any_io_executor executor;
    boost::asio::strand<boost::asio::any_io_executor> strand;
    sql_steps::method kind;
    lock_capabilities capabilities;  ///< its `backend` is the log's source
    std::chrono::milliseconds lease_ttl;
    std::chrono::steady_clock::duration renew_every;
    log_sink log_to;
    std::mutex m;
    /// The locks made so far (under m): the service's end closes what they still have open.
    std::vector<std::weak_ptr<sql_lock>> locks;
    /// Set once the service has ended: nothing connects again (strand only).
    bool ended = false;

    /// Refuses a non-positive lease_ttl and a renew_interval not shorter than
    /// it (errc::invalid_argument, naming `options_type`), and starts a thread
    /// when the settings bring no executor.
    sql_context(sql_steps::method k, lock_capabilities caps, const lease_settings& s, const char* options_type);
    virtual ~sql_context() = default;
    sql_context(const sql_context&) = delete;
    sql_context& operator=(const sql_context&) = delete;

    /// Hands a record to the log (source: the backend's name), when it wants it.
    void log(log_level level, const std::string& message) const;
    bool on_thread() const noexcept;
    /// Keeps `lock` among the live locks (and forgets the ones gone).
    void track(const std::shared_ptr<sql_lock>& lock);
    /// The service's end (its destructor): what the Locks' destructors queued
    /// (their releases) runs first; a connection that still waits after that (a
    /// server that does not answer) is closed, so that nothing holds the
    /// service's context past its end.
    static void end_service(const std::shared_ptr<sql_context>& ctx);
};

} // namespace zklock::detail::sql
