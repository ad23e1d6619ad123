// One Lock of a MySQL-protocol lock service: one contender for one lock, on
// its own connection. Everything but the atomics runs on the context's
// strand. The shape of the PostgreSQL backend's (pg_backend.hpp), in three files:
//   my_backend.cpp  the Lock interface and the connection (connect, schema, its end)
//   my_acquire.cpp  acquire attempts, cancel and deadline, polling for a lease's release
//   my_hold.cpp     the held lock: lease renewal, loss, release
// The SQL is mysql_statements'; the decisions over what it answered are mysql_steps'.
#pragma once

#include "lock/acquire_gate.hpp"
#include "lock/counter_cells.hpp"
#include "lock/loss_reports.hpp"
#include "backends/mysql/my_connection.hpp"
#include "backends/mysql/mysql_context.hpp"
#include "backends/mysql/mysql_statements.hpp"

#include <zklock/backend.hpp>
#include <zklock/lock.hpp>

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
#include <vector>

namespace zklock::detail::mysql {

class my_backend : public LockBackend, public std::enable_shared_from_this<my_backend> {
public:
    using time_point = std::chrono::steady_clock::time_point;

    my_backend(std::shared_ptr<mysql_context> ctx, std::string name);
    ~my_backend() override;

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
    lock_capabilities capabilities() const noexcept override { return ctx_->capabilities(); }
    lock_stats stats() const noexcept override { return gate_.with_times(counters_.snapshot()); }
    std::string failure_detail() const override;

    /// The service ended with this lock's work still waiting (strand): its
    /// connection closes, an acquire in flight and the loss waits end with
    /// errc::session_closed.
    void end_of_service();

private:
    mysql_steps::method method() const noexcept { return ctx_->method; }
    mysql_sql::lock_args args() const { return {name_, owner_, ttl_, no_wait_, version_}; }
    void note_failure(const std::string& what);

    // connection (my_backend.cpp)
    void ensure_connected(std::function<void(std::error_code)> next);
    void setup(std::shared_ptr<connection> conn, std::function<void(std::error_code)> next);
    void connection_ended();
    void close_if_idle();
    void drop_connection();
    void cancel_timers();

    // acquire (my_acquire.cpp)
    void start_acquire(std::optional<time_point> deadline, bool no_wait, acquire_callback cb);
    void abort_acquire(std::error_code why);
    void attempt();
    void prepare_row();
    void take_version(std::int64_t read);
    void attempt_done(std::error_code ec, const std::vector<result>& results, mysql_steps::attempt_result r);
    void rollback_then(std::function<void()> next);
    void undo_then_finish(std::error_code why);
    void grant(std::int64_t token);
    void finish(std::error_code ec, bool acquired);
    void wait_for_release();
    void retry_now();

    // holding (my_hold.cpp)
    void arm_validity(time_point until);
    void schedule_renew(std::chrono::steady_clock::duration after);
    void renew();
    void lost(std::error_code why);
    void do_release(std::function<void(std::error_code)> done);
    void release_on_server(std::function<void(std::error_code)> done);

    std::shared_ptr<mysql_context> ctx_;
    std::string name_;
    std::string owner_;
    std::chrono::milliseconds ttl_{};
    std::chrono::steady_clock::duration renew_every_{};
    std::shared_ptr<connection> conn_;
    boost::asio::steady_timer deadline_timer_, retry_timer_, renew_timer_, valid_timer_;
    acquire_callback callback_;
    std::shared_ptr<detail::loss_reports> losses_;
    std::optional<std::error_code> abort_;
    time_point lease_sent_{};
    std::chrono::steady_clock::duration backoff_{};
    std::minstd_rand rng_{std::random_device{}()};
    std::uint64_t acq_gen_ = 0;
    std::int64_t version_ = 0;  // version: the version read, then the one held
    bool no_wait_ = false;
    bool in_flight_ = false;
    bool waiting_ = false;
    bool connecting_ = false;
    bool releasing_ = false;
    bool shutting_down_ = false;
    bool prepared_ = false;  // row, version: the lock's row exists
    acquire_gate gate_;
    std::atomic<std::int64_t> token_{0};
    counter_cells counters_;
    mutable std::mutex detail_m_;
    std::string detail_;  // why the last acquire failed, in the server's words (never a secret)
};

} // namespace zklock::detail::mysql
