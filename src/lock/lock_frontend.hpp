// The blocking and asynchronous front end shared by Mutex and Lock: turns a
// backend's strand-side callbacks into user completions and blocking calls.
#pragma once

#include <zklock/backend.hpp>
#include <zklock/lock.hpp>

#include <boost/asio/any_completion_handler.hpp>

namespace zklock::detail {

using time_point = std::chrono::steady_clock::time_point;

bool acquire_blocking(LockBackend& backend, std::optional<time_point> deadline, bool no_wait, std::error_code& ec);
void async_acquire(LockBackend& backend, std::optional<time_point> deadline, bool no_wait,
                   boost::asio::any_completion_handler<void(std::error_code, bool)> handler);
void async_lock(LockBackend& backend, boost::asio::any_completion_handler<void(std::error_code)> handler);
void async_release(LockBackend& backend, boost::asio::any_completion_handler<void(std::error_code)> handler);
void async_wait_lost(LockBackend& backend, boost::asio::any_completion_handler<void(std::error_code)> handler);

} // namespace zklock::detail
