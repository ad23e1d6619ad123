// The engine of one Lock of an SQL lock service (PostgreSQL's and MySQL's lease
// row, advisory lock, row lock and version column): one contender for one lock,
// on its own connection. Everything but the atomics runs on the context's
// strand. The engine runs the protocol the databases share: the acquire gate,
// the deadline and cancel, the attempts and what their decisions say (grant,
// undo a late grant, wait and retry, roll back), lease renewal and its
// validity, loss, release and the service's end. What a database says on the
// wire is its backend's (pg_backend, my_backend): the connection, its setup,
// the statements and how their answers read.
//   sql_lock.cpp        the Lock interface, the connection's life, the service's end
//   sql_acquire.cpp     acquire: deadline, cancel, attempts' outcomes, waiting for a release
//   sql_hold.cpp        the held lock: lease renewal, loss, release
#pragma once

#include "backends/sql/sql_context.hpp"
#include "backends/sql/sql_steps.hpp"
#include "lock/acquire_gate.hpp"
#include "lock/counter_cells.hpp"
#include "lock/loss_reports.hpp"

#include <zklock/backend.hpp>
#include <zklock/error.hpp>
#include <zklock/lock.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <system_error>

namespace zklock::detail::sql {

class sql_lock : public LockBackend, public std::enable_shared_from_this<sql_lock> {
public:
    using time_point = std::chrono::steady_clock::time_point;
    using duration = std::chrono::steady_clock::duration;

    ~sql_lock() override = default;

    void acquire(std::optional<time_point> deadline, bool no_wait, boost::asio::cancellation_slot slot,
                 acquire_callback callback) override;
    std::error_code release(std::function<void(std::error_code)> done) override;
    void shutdown() noexcept override;
    bool held() const noexcept override { return gate_.held(); }
    std::int64_t fencing_token() const noexcept override { return token_.load(); }
    void on_lost(std::function<void(std::error_code)> callback) override { losses_->add_callback(std::move(callback)); }
    void wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override;
    bool on_backend_thread() const noexcept override { return ctx_->on_thread(); }
    boost::asio::any_io_executor executor() const override { return ctx_->executor; }
    lock_capabilities capabilities() const noexcept override { return ctx_->capabilities; }
    lock_stats stats() const noexcept override { return gate_.with_times(counters_.snapshot()); }
    std::string failure_detail() const override;

    /// The service ended with this lock's work still waiting (strand): its
    /// connection closes (the server frees an advisory or row lock at once, a
    /// lease at its ttl), an acquire in flight and the loss waits end with
    /// errc::session_closed.
    void end_of_service();

protected:
    /// How a waiter polls for a lease's release: a jittered backoff that starts
    /// at `first` and doubles up to min(ttl / 4, `cap`).
    struct poll_backoff {
        duration first;
        duration cap;
    };
    sql_lock(std::shared_ptr<sql_context> ctx, std::string name, poll_backoff poll);

    // --- What the database's backend does (every call on the strand).
    /// Makes a connection, connects and sets it up; `done` gets {} once it can
    /// take the lock's statements (its end then calls connection_ended()), or
    /// the error (no connection kept).
    virtual void open_connection(std::function<void(std::error_code)> done) = 0;
    /// A connection that can take statements is kept.
    virtual bool connection_open() const noexcept = 0;
    /// A statement is running on the kept connection.
    virtual bool connection_busy() const noexcept = 0;
    /// The server as host:port of the kept (or last) connection; never a secret.
    virtual std::string connection_endpoint() const = 0;
    /// Closes the kept connection, if any, and forgets it (its callbacks are dropped).
    virtual void close_connection() noexcept = 0;
    /// One acquire attempt on the open connection (in_flight_ set while a
    /// statement runs); its answer goes to follow(), a version read that
    /// found the lock taken too.
    virtual void send_attempt() = 0;
    /// An abort came while an attempt's statement runs: true when it ended the
    /// acquire itself (by ending the connection), false when the statement's
    /// answer settles it.
    virtual bool interrupt_attempt() = 0;
    /// Extends the held lease; `done` gets whether it failed and how many rows matched.
    virtual void send_renewal(std::function<void(bool failed, std::uint64_t matched)> done) = 0;
    /// Gives back the lock of fencing token `token` on the open connection.
    virtual void send_release(std::int64_t token, std::function<void(std::error_code)> done) = 0;
    /// Ends the connection's open transaction.
    virtual void send_rollback(std::function<void(std::error_code)> done) = 0;
    /// The attempt's statement is answered or given up (a cancel still being sent stops).
    virtual void attempt_settled() noexcept {}

    // --- What the backend calls.
    std::shared_ptr<sql_lock> self() { return shared_from_this(); }
    sql_context& context() const noexcept { return *ctx_; }
    sql_steps::method kind() const noexcept { return ctx_->kind; }
    bool by_ttl() const noexcept { return sql_steps::lives_by_ttl(ctx_->kind); }
    /// A fresh random owner id for an attempt (32 hex digits).
    static std::string random_owner();
    void note_failure(const std::string& what);
    /// Logs a connect's outcome: connected, or why not (also the failure's detail).
    void log_connect(const std::string& endpoint, std::error_code ec, const std::string& message);
    /// The connection that held or renewed the lock ended.
    void connection_ended();
    /// Does what the decision over an attempt's answer says; `token` is the
    /// answer's fencing token (0 for none).
    void follow(const sql_steps::after_attempt_step& step, std::error_code ec, std::int64_t token);
    /// Ends the acquire, acquired or not.
    void finish(std::error_code ec, bool acquired);
    /// A notification that the lock was released (PostgreSQL's LISTEN).
    void notified();
    void close_if_idle();
    /// Tries the next attempt (after a rollback or a lost race), unless the acquire ended or was aborted.
    void retry_now();

    const std::string name_;
    std::string owner_;                 ///< this attempt's (lease, version)
    const std::chrono::milliseconds ttl_;
    time_point lease_sent_{};           ///< when the granting statement was sent: the lease runs from it
    std::uint64_t acq_gen_ = 0;         ///< the acquire's generation: answers of an older one do nothing
    std::optional<std::error_code> abort_;
    bool no_wait_ = false;
    bool in_flight_ = false;
    bool prepared_ = false;             ///< row, version: the lock's row exists
    bool notified_in_flight_ = false;   ///< released while our attempt was in flight
    acquire_callback callback_;
    counter_cells counters_;

private:
    void ensure_connected(std::function<void(std::error_code)> next);
    void cancel_timers();

    // acquire (sql_acquire.cpp)
    void start_acquire(std::optional<time_point> deadline, bool no_wait, acquire_callback cb);
    void abort_acquire(std::error_code why);
    void attempt();
    void rollback_then(std::function<void()> next);
    void undo_then_finish(std::error_code why, std::int64_t token);
    void grant(std::int64_t token);
    void wait_for_release();

    // holding (sql_hold.cpp)
    void arm_validity(time_point until);
    void schedule_renew(duration after);
    void renew();
    void lost(std::error_code why);
    void do_release(std::function<void(std::error_code)> done);
    void release_on_server(std::int64_t token, std::function<void(std::error_code)> done);

    std::shared_ptr<sql_context> ctx_;
    const poll_backoff poll_;
    boost::asio::steady_timer deadline_timer_, retry_timer_, renew_timer_, valid_timer_;
    std::shared_ptr<detail::loss_reports> losses_;
    duration backoff_{};
    std::minstd_rand rng_{std::random_device{}()};
    bool waiting_ = false;
    bool connecting_ = false;
    bool releasing_ = false;
    bool shutting_down_ = false;
    acquire_gate gate_;
    std::atomic<std::int64_t> token_{0};
    mutable std::mutex detail_m_;
    std::string detail_;  // why the last acquire failed, in the server's words (never a secret)
};

/// The engine on one of the databases' connection types (pg::connection,
/// mysql::connection): the hooks every connection answers alike.
template <class Connection>
class sql_lock_on : public sql_lock {
protected:
    using sql_lock::sql_lock;
    /// The connection closes on the strand: its last handlers may still run there.
    ~sql_lock_on() override {
        if (!conn_) return;
        try {
            boost::asio::post(context().strand, [c = std::move(conn_)] { c->close(); });
        } catch (...) {
        }
    }

    bool connection_open() const noexcept override { return conn_ && conn_->connected(); }
    bool connection_busy() const noexcept override { return conn_ && conn_->busy(); }
    std::string connection_endpoint() const override { return conn_ ? conn_->endpoint() : "the server"; }
    void close_connection() noexcept override {
        if (conn_) conn_->close();
        conn_.reset();
    }

    /// For open_connection, once `conn`'s connect ended with `ec` (`message`:
    /// the client's words): false when it failed or another connection took its
    /// place meanwhile (`done` then has the error, nothing is kept); true when
    /// it connected: its end now reaches connection_ended().
    bool connect_ended(const std::shared_ptr<Connection>& conn, std::error_code ec, const std::string& message,
                       const std::function<void(std::error_code)>& done) {
        if (ec || conn != conn_) {
            if (conn == conn_) conn_.reset();
            if (ec) log_connect(conn->endpoint(), ec, message);
            done(ec ? ec : make_error_code(errc::connection_loss));
            return false;
        }
        log_connect(conn->endpoint(), {}, {});
        std::weak_ptr<sql_lock> weak = self();
        conn->on_broken([weak] {
            if (auto s = weak.lock()) static_cast<sql_lock_on*>(s.get())->connection_ended();
        });
        return true;
    }

    std::shared_ptr<Connection> conn_;
};

} // namespace zklock::detail::sql
