// One Lock of a PostgreSQL lock service: one contender for one lock, on its
// own connection. Everything but the atomics runs on the context's strand.
// Its parts live in three files:
//   pg_backend.cpp  the Lock interface and the connection (connect, schema, its end)
//   pg_acquire.cpp  acquire attempts, cancel and deadline, waiting for a lease's release
//   pg_hold.cpp     the held lock: lease renewal, loss, release
// The SQL of each method is a lock_method (lock_method.hpp); the decisions
// over what a statement answered are detail/postgres_steps'.
#pragma once

#include "lock/counter_cells.hpp"
#include "lock/acquire_gate.hpp"
#include "lock/loss_reports.hpp"
#include "backends/postgres/pg_connection.hpp"
#include "backends/postgres/postgres_context.hpp"

#include <zklock/backend.hpp>
#include <zklock/lock.hpp>

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::detail::pg {

class pg_backend : public LockBackend, public std::enable_shared_from_this<pg_backend> {
public:
    using time_point = std::chrono::steady_clock::time_point;

    pg_backend(std::shared_ptr<postgres_context> ctx, std::string name);
    ~pg_backend() override;

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
    lock_capabilities capabilities() const noexcept override { return ctx_->method.capabilities(); }
    lock_stats stats() const noexcept override { return gate_.with_times(counters_.snapshot()); }

    /// The service ended with this lock's work still waiting (strand): its
    /// connection closes (the server frees an advisory or row lock at once, a
    /// lease at its ttl), an acquire in flight and the loss waits end with
    /// errc::session_closed.
    void end_of_service();

private:
    const lock_method& method() const noexcept { return ctx_->method; }
    std::string ttl_interval() const { return std::to_string(ttl_.count()) + " milliseconds"; }

    // connection (pg_backend.cpp)
    void ensure_connected(std::function<void(std::error_code)> next);
    std::string setup_sql() const;
    void connection_ended();
    void close_if_idle();
    void drop_connection();
    void cancel_timers();

    // acquire (pg_acquire.cpp)
    void start_acquire(std::optional<time_point> deadline, bool no_wait, acquire_callback cb);
    void abort_acquire(std::error_code why);
    void send_cancel_repeatedly();
    void attempt();
    /// Sends the acquire statement (after the version method's read, with what it saw).
    void send_attempt(const std::string& observed, connection::result_callback done);
    /// `row_missing`: the version method's read found no row for the lock.
    void attempt_done(std::error_code ec, std::vector<result> results, bool row_missing = false);
    void rollback_then(std::function<void()> next);
    /// `token`: the late grant's fencing token (the version method releases by it).
    void undo_then_finish(std::error_code why, std::int64_t token);
    void grant(std::int64_t token);
    void finish(std::error_code ec, bool acquired);
    void wait_for_release();
    void notified();

    // holding (pg_hold.cpp)
    void arm_validity(time_point until);
    void schedule_renew(std::chrono::steady_clock::duration after);
    void renew();
    void lost(std::error_code why);
    void do_release(std::function<void(std::error_code)> done);
    /// Gives the lock of fencing token `token` back on the server.
    void release_on_server(std::int64_t token, std::function<void(std::error_code)> done);

    std::shared_ptr<postgres_context> ctx_;
    std::string name_;
    std::string channel_;
    std::string owner_;
    std::chrono::milliseconds ttl_{};
    std::chrono::steady_clock::duration renew_every_{};
    std::shared_ptr<connection> conn_;
    boost::asio::steady_timer deadline_timer_, retry_timer_, renew_timer_, valid_timer_, cancel_timer_;
    acquire_callback callback_;
    std::shared_ptr<detail::loss_reports> losses_;
    std::optional<std::error_code> abort_;
    time_point lease_sent_{};
    std::chrono::steady_clock::duration backoff_{};
    std::minstd_rand rng_{std::random_device{}()};
    std::uint64_t acq_gen_ = 0;
    bool no_wait_ = false;
    bool in_flight_ = false;
    bool notified_in_flight_ = false;
    bool waiting_ = false;
    bool connecting_ = false;
    bool releasing_ = false;
    bool shutting_down_ = false;
    bool prepared_ = false;  // the method's prepare() statement succeeded (row: the row exists)
    acquire_gate gate_;
    std::atomic<std::int64_t> token_{0};
    counter_cells counters_;
};

} // namespace zklock::detail::pg
