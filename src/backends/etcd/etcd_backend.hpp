// One Lock of an EtcdLockService: etcd's concurrency.Mutex recipe with a lease
// of its own (see zklock/etcd/etcd_lock_service.hpp). Its parts:
//   etcd_backend.cpp   the LockBackend interface, release, the end
//   etcd_acquire.cpp   the Txn, the wait steps, the watch, the clean-up
//   etcd_lease.cpp     the lease: grant, keepalives, its clock, its loss
// The decisions are etcd_steps'. Everything but the LockBackend interface
// runs on the service's thread.
#pragma once

#include "backends/etcd/etcd_context.hpp"
#include "backends/etcd/etcd_steps.hpp"
#include "lock/acquire_gate.hpp"
#include "lock/counter_cells.hpp"
#include "lock/loss_reports.hpp"

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

namespace zklock::detail::etcd {

class etcd_backend : public LockBackend, public std::enable_shared_from_this<etcd_backend> {
public:
    using clock_type = std::chrono::steady_clock;

    etcd_backend(std::shared_ptr<etcd_context> ctx, std::string prefix);
    ~etcd_backend() override;

    void acquire(std::optional<clock_type::time_point> deadline, bool no_wait, boost::asio::cancellation_slot slot,
                 acquire_callback callback) override;
    std::error_code release(std::function<void(std::error_code)> done) override;
    void shutdown() noexcept override;
    bool held() const noexcept override { return gate_.held(); }
    std::int64_t fencing_token() const noexcept override { return fence_.load(); }
    std::optional<clock_type::time_point> safe_until() const noexcept override;
    void on_lost(std::function<void(std::error_code)> callback) override { losses_->add_callback(std::move(callback)); }
    void wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override;
    bool on_backend_thread() const noexcept override { return ctx_->on_thread(); }
    boost::asio::any_io_executor executor() const override { return ctx_->executor; }
    lock_capabilities capabilities() const noexcept override { return etcd::capabilities(); }
    lock_stats stats() const noexcept override { return gate_.with_times(counters_.snapshot()); }

    /// Lets the service end this lock when the service ends first.
    void register_closer();

private:
    // acquire (etcd_acquire.cpp)
    void start(std::uint64_t op, std::optional<clock_type::time_point> deadline, bool no_wait, acquire_callback cb);
    void attempt();
    void send_txn();
    void txn_answered(std::uint64_t op, std::error_code ec, const etcdserverpb::TxnResponse& r);
    void wait_step();
    void wait_answered(std::uint64_t op, std::error_code ec, const etcdserverpb::TxnResponse& r);
    void grant();
    /// A step failed: retry after a backoff while the deadline allows, else fail.
    void step_failed(std::error_code ec);
    void finish(std::error_code ec, bool acquired);
    void give_up(std::error_code ec);
    /// Deletes our key unless a Txn that may create it is in flight (its answer does it then).
    void remove_key();
    bool current(std::uint64_t op) const noexcept { return callback_ && op_ == op; }

    // lease (etcd_lease.cpp)
    void ensure_lease(std::function<void(std::error_code)> then);
    void lease_answered(clock_type::time_point sent, std::int64_t ttl);
    void schedule_keepalive();
    void lease_lost(std::error_code why);
    /// Revokes the lease (which deletes our key) and forgets it.
    void drop_lease();
    void lose(std::error_code why);
    void end_hold();
    void close_for_service();

    std::shared_ptr<etcd_context> ctx_;
    const std::string prefix_;
    const std::uint64_t id_;
    const std::int64_t ttl_s_;
    // the service's thread only
    acquire_callback callback_;
    std::uint64_t op_ = 0;
    std::optional<clock_type::time_point> deadline_;
    bool no_wait_ = false;
    std::error_code last_error_;
    std::chrono::milliseconds backoff_{50};
    boost::asio::steady_timer deadline_timer_, retry_timer_, keepalive_timer_;
    std::int64_t lease_ = 0;
    lease_clock clock_;
    bool granting_ = false;  // a LeaseGrant is in flight
    std::vector<std::function<void(std::error_code)>> lease_waiters_;
    std::string key_;
    std::int64_t my_revision_ = 0;
    bool txn_in_flight_ = false, key_may_exist_ = false, delete_in_flight_ = false, attempt_pending_ = false;
    std::int64_t watch_id_ = 0;
    bool holding_ = false;
    std::shared_ptr<loss_reports> losses_;
    // any thread
    acquire_gate gate_;
    counter_cells counters_;
    std::atomic<std::int64_t> fence_{0};
    std::atomic<std::int64_t> safe_until_ns_{0};  // steady-clock ns while held
};

} // namespace zklock::detail::etcd
