// The part of one Lock that the key-lease backends share (redis and redlock:
// redis_backend; memcached: memcached_backend). Their lock is a key that holds
// the holder's random token for a time-to-live: an acquire sets it in rounds
// until it is granted, a watchdog renews it every ttl/3 while held, and a
// release deletes it where it is still ours.
//
// Here: the LockBackend interface, the acquire's bookkeeping (deadline, retry
// timer, completion), the hold's (watchdog, renewal failures, loss) and the
// service's end. The backend (Derived, a friend) brings its protocol:
//   void attempt();   one acquire round, ending in grant(), retry_after() or finish()
//   void tick();      one renewal, ending in renewed() or renewal_failed(), or lose()
//   void let_go(std::function<void(std::error_code)> done);
//                     deletes the key where token_ is still ours; `done` (may be
//                     empty) gets the outcome
//   static constexpr const char* expired_text, taken_text;
//                     why a loss for errc::session_expired / errc::node_deleted
// and, where it keeps more state, acquire_ended(ec) (each acquire's end) and
// hold_ended() (each hold's end). Context is the service's context, a
// live_locks with options.ttl, options.log's log(), post(), on_thread() and
// executor. Everything but the LockBackend interface runs on the service's
// thread.
#pragma once

#include "backends/key_lease/live_locks.hpp"
#include "lock/acquire_gate.hpp"
#include "lock/counter_cells.hpp"
#include "lock/loss_reports.hpp"
#include "support/async_support.hpp"

#include <zklock/backend.hpp>
#include <zklock/error.hpp>
#include <zklock/lock.hpp>
#include <zklock/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace zklock::detail {

/// What every key-lease backend offers and does not (each adds its wake-ups,
/// fencing tokens and limits): grants in no order, a dead holder's lock freed
/// when its ttl runs out, fencing tokens (where it has them) that do not
/// survive a failover, a release that wakes every waiter, losses reported.
inline lock_capabilities key_lease_capabilities(std::string_view backend) noexcept {
    lock_capabilities c;
    c.backend = backend;
    c.fair_fifo = false;
    c.dead_holder = dead_holder_release::ttl_expiry;
    c.fencing_monotonic_across_failover = false;
    c.wakes_one_waiter = false;
    c.reports_loss = true;
    return c;
}

template <class Derived, class Context>
class key_lease_backend : public LockBackend, public std::enable_shared_from_this<Derived> {
public:
    using clock_type = std::chrono::steady_clock;

    ~key_lease_backend() override {
        std::lock_guard lk(ctx_->closers_mutex);
        ctx_->closers.erase(id_);
    }

    void acquire(std::optional<clock_type::time_point> deadline, bool no_wait, boost::asio::cancellation_slot slot,
                 acquire_callback callback) override {
        const auto post = [c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); };
        const std::uint64_t op = begin_acquire<Derived>(this->shared_from_this(), &key_lease_backend::gate_, post, slot,
                                                        callback, [](Derived& b) { b.give_up(operation_aborted()); });
        if (op == 0) return;
        ctx_->post([self = this->shared_from_this(), op, deadline, no_wait, cb = std::move(callback)]() mutable {
            self->start(op, deadline, no_wait, std::move(cb));
        });
    }

    std::error_code release(std::function<void(std::error_code)> done) override {
        if (!gate_.release()) return make_error_code(errc::not_held);
        ctx_->post([self = this->shared_from_this(), done = std::move(done)]() mutable {
            if (!self->holding_) {  // lost in between: that was reported
                if (done) done({});
                return;
            }
            self->end_hold();
            self->let_go(std::move(done));
            self->losses_->end_waits({});
        });
        return {};
    }

    void shutdown() noexcept override {
        try {
            ctx_->post([self = this->shared_from_this()] {
                self->give_up(operation_aborted());
                if (self->holding_) {
                    self->gate_.end_hold();
                    self->end_hold();
                    self->let_go(nullptr);
                }
                self->losses_->end_waits(operation_aborted());
                self->losses_->forget_callbacks();
            });
        } catch (...) {
        }
    }

    bool held() const noexcept override { return gate_.held(); }
    void on_lost(std::function<void(std::error_code)> callback) override { losses_->add_callback(std::move(callback)); }
    void wait_lost(boost::asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override {
        losses_->wait(slot, std::move(callback), [self = this->shared_from_this()] { return self->holding_; });
    }
    bool on_backend_thread() const noexcept override { return ctx_->on_thread(); }
    boost::asio::any_io_executor executor() const override { return ctx_->executor; }
    lock_stats stats() const noexcept override { return gate_.with_times(counters_.snapshot()); }

    /// Lets the service end this lock when the service ends first.
    void register_closer() {
        std::lock_guard lk(ctx_->closers_mutex);
        ctx_->closers[id_] = [weak = this->weak_from_this()] {
            if (auto self = weak.lock()) self->close_for_service();
        };
    }

protected:
    /// `timers`: where the timers' waits complete (the service's thread);
    /// `first_backoff`: the backend's first wait between acquire rounds.
    key_lease_backend(const std::shared_ptr<Context>& ctx, std::string key, const boost::asio::any_io_executor& timers,
                      std::chrono::milliseconds first_backoff)
        : ctx_(ctx), key_(std::move(key)), id_(ctx_->next_id++), ttl_(ctx_->options.ttl),
          first_backoff_(first_backoff), deadline_timer_(timers), retry_timer_(timers), watchdog_timer_(timers),
          losses_(loss_reports::make([c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); }, ctx_->executor)) {}

    // --- the acquire

    /// Waits `delay` (at most until the deadline), then attempt()s again.
    void retry_after(clock_type::duration delay) {
        if (deadline_) delay = std::min(delay, std::max(clock_type::duration::zero(), *deadline_ - clock_type::now()));
        retry_timer_.expires_after(delay);
        retry_timer_.async_wait([self = this->shared_from_this(), op = op_](boost::system::error_code ec) {
            if (!ec && self->op_ == op) {
                counter_cells::bump(self->counters_.timer_retries);
                self->attempt();
            }
        });
    }

    /// The key holds `token` until `valid_until` at least: the acquire
    /// succeeds, and the watchdog starts.
    void grant(std::string token, clock_type::time_point valid_until) {
        token_ = std::move(token);
        holding_ = true;
        ++hold_gen_;
        valid_until_ = valid_until;
        renew_failing_ = false;
        counter_cells::bump(counters_.acquisitions);
        finish({}, true);
        schedule_watchdog(ttl_ / 3);
    }

    /// Completes the acquire in progress, if any.
    void finish(std::error_code ec, bool acquired) {
        deadline_timer_.cancel();
        retry_timer_.cancel();
        derived().acquire_ended(ec);
        op_ = 0;
        if (auto cb = std::exchange(callback_, nullptr)) {
            gate_.end(acquired);
            cb(ec, acquired);
        }
    }

    void give_up(std::error_code ec) {
        if (callback_) finish(ec, false);
    }

    // --- the hold

    void schedule_watchdog(clock_type::duration delay) {
        delay = std::min(delay, std::max(clock_type::duration::zero(), valid_until_ - clock_type::now()));
        watchdog_timer_.expires_after(delay);
        watchdog_timer_.async_wait([self = this->shared_from_this(), gen = hold_gen_](boost::system::error_code ec) {
            if (!ec && self->holding_ && self->hold_gen_ == gen) self->tick();
        });
    }

    /// A renewal succeeded: the lease lasts until `valid_until` at least.
    void renewed(clock_type::time_point valid_until) {
        valid_until_ = std::max(valid_until_, valid_until);
        if (renew_failing_) ctx_->log(log_level::info, "lock " + key_ + ": renewed again");
        renew_failing_ = false;
    }

    /// A renewal failed (`what` went wrong): retry sooner, every ttl/10, until
    /// the lease runs out (said once).
    void renewal_failed(const std::string& what) {
        if (!renew_failing_)
            ctx_->log(log_level::warn, "lock " + key_ + ": " + what + "; retrying every " +
                                           std::to_string((ttl_ / 10).count()) + " ms until the lease runs out");
        renew_failing_ = true;
        schedule_watchdog(ttl_ / 10);
    }

    void end_hold() {
        holding_ = false;
        ++hold_gen_;
        watchdog_timer_.cancel();
        derived().hold_ended();
    }

    /// The lock is lost (`why`): said, deleted wherever it may still be ours,
    /// reported.
    void lose(std::error_code why) {
        if (!holding_) return;
        ctx_->log(log_level::error, "lock " + key_ + " lost: " +
                                        (why == make_error_code(errc::session_expired) ? Derived::expired_text
                                         : why == make_error_code(errc::node_deleted)  ? Derived::taken_text
                                                                                       : why.message()));
        gate_.end_hold();
        end_hold();
        derived().let_go(nullptr);
        losses_->lost(why);
    }

    // The hooks Derived may leave out.
    void acquire_ended(std::error_code) {}
    void hold_ended() {}

    std::shared_ptr<Context> ctx_;
    const std::string key_;
    const std::uint64_t id_;
    const std::chrono::milliseconds ttl_;
    const std::chrono::milliseconds first_backoff_;
    // the service's thread only
    acquire_callback callback_;
    std::uint64_t op_ = 0;
    std::optional<clock_type::time_point> deadline_;
    bool no_wait_ = false;
    std::chrono::milliseconds backoff_{first_backoff_};
    std::error_code last_error_;
    boost::asio::steady_timer deadline_timer_, retry_timer_, watchdog_timer_;
    std::string token_;  // while held: the key's value
    bool holding_ = false, renew_failing_ = false;
    std::uint64_t hold_gen_ = 0;
    clock_type::time_point valid_until_{};
    std::shared_ptr<loss_reports> losses_;
    // any thread
    acquire_gate gate_;
    counter_cells counters_;

private:
    Derived& derived() noexcept { return static_cast<Derived&>(*this); }

    void start(std::uint64_t op, std::optional<clock_type::time_point> deadline, bool no_wait, acquire_callback cb) {
        callback_ = std::move(cb);
        op_ = op;
        deadline_ = deadline;
        no_wait_ = no_wait;
        backoff_ = first_backoff_;
        last_error_ = {};
        if (ctx_->closed) return finish(make_error_code(errc::session_closed), false);
        if (deadline_) {
            deadline_timer_.expires_at(*deadline_);
            deadline_timer_.async_wait([self = this->shared_from_this(), op](boost::system::error_code ec) {
                if (!ec && self->op_ == op) self->give_up(self->last_error_);
            });
        }
        derived().attempt();
    }

    /// The service ends (its thread): abandon the acquire, release what is held.
    void close_for_service() {
        give_up(make_error_code(errc::session_closed));
        if (!holding_) return;
        gate_.end_hold();
        end_hold();
        derived().let_go(nullptr);
        losses_->lost(make_error_code(errc::session_closed));
    }
};

} // namespace zklock::detail
