// One Lock of a RedisLockService or RedlockService (a single Redis server is
// Redlock with one master). Its parts live in three files:
//   redis_backend.cpp   the Lock interface, the scripts sent to every master, release
//   redis_acquire.cpp   acquire rounds, waiting on the release channel, backoff
//   redis_watchdog.cpp  the held lease: renewal every ttl/3, loss
// The decisions over the masters' answers are detail/redlock's.
#pragma once

#include "lock/acquire_gate.hpp"
#include "lock/counter_cells.hpp"
#include "lock/loss_reports.hpp"
#include "backends/redis/redis_context.hpp"

#include "backends/redis/redlock.hpp"
#include <zklock/backend.hpp>
#include <zklock/lock.hpp>

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::detail::redis {

/// The first and the largest wait between acquire rounds while no release
/// message comes (doubling, jittered, capped by the ttl).
inline constexpr std::chrono::milliseconds first_backoff{50};
inline constexpr std::chrono::milliseconds max_backoff{1000};

class redis_backend : public LockBackend, public std::enable_shared_from_this<redis_backend> {
public:
    using clock_type = std::chrono::steady_clock;

    redis_backend(std::shared_ptr<redis_context> ctx, std::string key);
    ~redis_backend() override;

    void acquire(std::optional<clock_type::time_point> deadline, bool no_wait, boost::asio::cancellation_slot slot,
                 acquire_callback callback) override;
    std::error_code release(std::function<void(std::error_code)> done) override;
    void shutdown() noexcept override;
    bool held() const noexcept override { return gate_.held(); }
    std::int64_t fencing_token() const noexcept override { return fence_.load(); }
    void on_lost(std::function<void(std::error_code)> callback) override { losses_->add_callback(std::move(callback)); }
    void wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override;
    bool on_backend_thread() const noexcept override { return ctx_->on_thread(); }
    boost::asio::any_io_executor executor() const override { return ctx_->executor; }
    lock_capabilities capabilities() const noexcept override { return capabilities_of(ctx_->backend); }
    lock_stats stats() const noexcept override { return gate_.with_times(counters_.snapshot()); }

    /// Lets the service end this lock when the service ends first.
    void register_closer();
    /// The service ends (strand): abandon the acquire, release what is held.
    void close_for_service();

private:
    using result = redlock::master_reply;

    std::size_t n() const noexcept { return ctx_->masters.size(); }
    std::vector<std::string> eval(const char* script, std::string arg1, std::string arg2) const;
    /// Sends `cmd` to every master; `done` gets one result per master once all answered.
    void on_all(std::vector<std::string> cmd, std::function<void(std::vector<result>)> done);
    /// Compare-and-delete on every master; `done` gets redlock::after_release's verdict.
    void release_everywhere(const std::string& token, std::function<void(std::error_code)> done, bool publish = true);

    // acquire (redis_acquire.cpp)
    void start(std::uint64_t op, std::optional<clock_type::time_point> deadline, bool no_wait, acquire_callback cb);
    void attempt();
    void round_done(std::uint64_t op, const std::string& token, clock_type::time_point started,
                    const std::vector<result>& results);
    void round_failed(const redlock::round_tally& t);
    clock_type::duration next_backoff();
    void retry_after(clock_type::duration delay);
    void wake(const std::string* released_token);
    void register_waits();
    void unregister_waits();
    void grant(const std::string& token, long long fence, clock_type::time_point started);
    void finish(std::error_code ec, bool acquired);
    void give_up(std::error_code ec);

    // hold (redis_watchdog.cpp)
    void schedule_watchdog(clock_type::duration delay);
    void tick();
    void renewed(std::uint64_t gen, clock_type::time_point started, const std::vector<result>& results);
    void end_hold();
    void lose(std::error_code why);

    std::shared_ptr<redis_context> ctx_;
    const std::string key_, fence_key_, channel_;
    const std::uint64_t id_;
    const std::chrono::milliseconds ttl_;
    // strand only
    acquire_callback callback_;
    std::uint64_t op_ = 0;
    std::optional<clock_type::time_point> deadline_;
    bool no_wait_ = false;
    bool round_in_flight_ = false, wake_pending_ = false, registered_ = false;
    std::chrono::milliseconds backoff_{first_backoff};
    std::error_code last_error_;
    boost::asio::steady_timer deadline_timer_, retry_timer_, watchdog_timer_;
    std::string token_;
    std::string last_release_seen_;  // the token of the last release message counted as a wake-up
    bool holding_ = false, renew_in_flight_ = false, renew_failing_ = false;
    std::uint64_t hold_gen_ = 0;
    clock_type::time_point valid_until_{};
    std::shared_ptr<detail::loss_reports> losses_;
    // any thread
    acquire_gate gate_;
    std::atomic<std::int64_t> fence_{0};
    counter_cells counters_;
};

} // namespace zklock::detail::redis
