// One Lock of a MemcachedLockService. Its parts live in three files:
//   memcached_backend.cpp   the Lock interface, release, the service's end
//   memcached_acquire.cpp   add() rounds and the polling between them
//   memcached_watchdog.cpp  the held lease: gets + cas every ttl/3, loss
// Every member but the LockBackend interface runs on the service's thread; the
// decisions are memcached_steps'.
#pragma once

#include "lock/acquire_gate.hpp"
#include "lock/counter_cells.hpp"
#include "lock/loss_reports.hpp"
#include "backends/memcached/memcached_context.hpp"

#include <zklock/backend.hpp>
#include <zklock/lock.hpp>

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

namespace zklock::detail::memcached {

class memcached_backend : public LockBackend, public std::enable_shared_from_this<memcached_backend> {
public:
    using clock_type = std::chrono::steady_clock;

    memcached_backend(std::shared_ptr<memcached_context> ctx, std::string key);
    ~memcached_backend() override;

    void acquire(std::optional<clock_type::time_point> deadline, bool no_wait, boost::asio::cancellation_slot slot,
                 acquire_callback callback) override;
    std::error_code release(std::function<void(std::error_code)> done) override;
    void shutdown() noexcept override;
    bool held() const noexcept override { return gate_.held(); }
    std::int64_t fencing_token() const noexcept override { return 0; }  // memcached has none
    void on_lost(std::function<void(std::error_code)> callback) override { losses_->add_callback(std::move(callback)); }
    void wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override;
    bool on_backend_thread() const noexcept override { return ctx_->on_thread(); }
    boost::asio::any_io_executor executor() const override { return ctx_->executor; }
    lock_capabilities capabilities() const noexcept override { return memcached::capabilities(); }
    lock_stats stats() const noexcept override { return gate_.with_times(counters_.snapshot()); }
    std::string failure_detail() const override;

    /// Lets the service end this lock when the service ends first.
    void register_closer();
    /// The service ends (thread): abandon the acquire, release what is held.
    void close_for_service();

private:
    /// gets, compare with `owner`, cas, delete: a release's outcome (memcached::after_release).
    std::error_code delete_if_ours(const std::string& owner);

    // acquire (memcached_acquire.cpp)
    void start(std::uint64_t op, std::optional<clock_type::time_point> deadline, bool no_wait, acquire_callback cb);
    void attempt();
    void retry_after(clock_type::duration delay);
    void grant(const std::string& owner, clock_type::time_point started);
    void finish(std::error_code ec, bool acquired);
    void give_up(std::error_code ec);

    // hold (memcached_watchdog.cpp)
    void schedule_watchdog(clock_type::duration delay);
    void tick();
    void end_hold();
    void lose(std::error_code why);

    std::shared_ptr<memcached_context> ctx_;
    const std::string key_;
    const std::uint64_t id_;
    const std::chrono::milliseconds ttl_;
    const std::uint32_t ttl_s_;
    // thread only
    acquire_callback callback_;
    std::uint64_t op_ = 0;
    std::optional<clock_type::time_point> deadline_;
    bool no_wait_ = false;
    std::chrono::milliseconds backoff_{first_poll};
    std::error_code last_error_;
    boost::asio::steady_timer deadline_timer_, retry_timer_, watchdog_timer_;
    std::string owner_;
    bool holding_ = false, renew_failing_ = false;
    std::uint64_t hold_gen_ = 0;
    clock_type::time_point valid_until_{};
    std::shared_ptr<detail::loss_reports> losses_;
    // any thread
    mutable std::mutex detail_mutex_;
    std::string failure_detail_;
    acquire_gate gate_;
    counter_cells counters_;
};

} // namespace zklock::detail::memcached
