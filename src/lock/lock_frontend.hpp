// The blocking and asynchronous front end shared by Mutex and Lock: turns a
// backend's strand-side callbacks into user completions and blocking calls.
#pragma once

#include <zklock/backend.hpp>
#include <zklock/lock.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <system_error>

namespace zklock::detail {

using time_point = std::chrono::steady_clock::time_point;

/// How an acquire starts: LockBackend::acquire's parameters (a requeue starts as one).
using acquire_start = std::function<void(std::optional<time_point> deadline, bool no_wait,
                                         boost::asio::cancellation_slot slot, LockBackend::acquire_callback done)>;

bool acquire_blocking(LockBackend& backend, std::optional<time_point> deadline, bool no_wait, std::error_code& ec);
/// As acquire_blocking and async_acquire, the acquire started by `start`.
bool acquire_blocking(LockBackend& backend, const acquire_start& start, std::optional<time_point> deadline,
                      std::error_code& ec);
void async_acquire(LockBackend& backend, const acquire_start& start, std::optional<time_point> deadline,
                   boost::asio::any_completion_handler<void(std::error_code, bool)> handler);
void async_lock(LockBackend& backend, const acquire_start& start,
                boost::asio::any_completion_handler<void(std::error_code)> handler);
void async_acquire(LockBackend& backend, std::optional<time_point> deadline, bool no_wait,
                   boost::asio::any_completion_handler<void(std::error_code, bool)> handler);
void async_lock(LockBackend& backend, boost::asio::any_completion_handler<void(std::error_code)> handler);
void async_release(LockBackend& backend, boost::asio::any_completion_handler<void(std::error_code)> handler);
void async_wait_lost(LockBackend& backend, boost::asio::any_completion_handler<void(std::error_code)> handler);

} // namespace zklock::detail
