// The loss half of every lock backend, written once: on_lost callbacks and
// async_wait_lost waiters, with one semantics for ZooKeeper, Redis, Redlock,
// PostgreSQL and flock.
//
// - on_lost: a list. Every callback registered is called once per lost hold,
//   posted to the user's executor (never inline in the backend's own work),
//   after the backend's state already says "not held".
// - wait_lost: each waiter completes once: with the loss reason, with {} when
//   the hold ended by a release, with errc::not_held when there was no hold,
//   with operation_canceled when the lock goes away or when its own
//   cancellation slot is signalled (which completes that waiter only).
//
// add_callback() and wait() may be called from any thread; everything else
// runs where the backend runs (its strand or thread), reached through the
// `post` function the backend gives.
#pragma once


#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

namespace zklock::detail {

class loss_reports : public std::enable_shared_from_this<loss_reports> {
public:
    using report = std::function<void(std::error_code)>;
    using post_function = std::function<void(std::function<void()>)>;

    /// `post` runs a function where the backend runs; `user` is where
    /// callbacks are posted.
    static std::shared_ptr<loss_reports> make(post_function post, boost::asio::any_io_executor user);

    /// Any thread: called for every hold lost from now on.
    void add_callback(report callback);
    /// Any thread: a waiter for the end of the current hold. `held` runs where
    /// the backend runs; when it says no hold, the waiter completes with
    /// errc::not_held. Signalling `slot` completes this waiter only.
    void wait(boost::asio::cancellation_slot slot, report waiter, std::function<bool()> held);

    /// Backend side: the hold was lost for `why`: every callback is posted
    /// with it and every waiter completes with it.
    void lost(std::error_code why);
    /// Backend side: the hold ended without a loss ({}: released), or the lock
    /// goes away (operation_canceled): every waiter completes with `ec`.
    void end_waits(std::error_code ec);
    /// Backend side: the lock goes away; no callback is called any more.
    void forget_callbacks();

    loss_reports(post_function post, boost::asio::any_io_executor user);

private:
    void finish(std::uint64_t id, std::error_code ec);

    post_function post_;
    boost::asio::any_io_executor user_;
    std::mutex callbacks_mutex_;
    std::vector<std::shared_ptr<report>> callbacks_;  // under callbacks_mutex_
    std::vector<std::pair<std::uint64_t, report>> waiters_;  // backend side only
    std::atomic<std::uint64_t> next_id_{1};
};

} // namespace zklock::detail
