// What `zklock run` holds while CMD runs: the lock (a Mutex), several locks as
// one (a MultiMutex), or one permit of a semaphore (a Lease).
#pragma once

#include <zklock/node_names.hpp>
#include <zklock/session.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::cli {

/// Every completion runs on the runner's io_context.
class holding {
public:
    using acquire_handler = std::function<void(std::error_code, bool acquired)>;
    using done_handler = std::function<void(std::error_code)>;
    virtual ~holding() = default;
    /// -n: only if free now; -w: within `wait` (then acquired=false without error);
    /// otherwise until granted.
    virtual void acquire(bool no_wait, std::optional<std::chrono::milliseconds> wait, acquire_handler done) = 0;
    /// Cancels a pending acquire: it completes with operation_canceled, no node left.
    virtual void cancel() = 0;
    virtual std::string node_path() const = 0;
    virtual std::int64_t fencing_token() const = 0;
    /// As Mutex::async_wait_lost.
    virtual void wait_lost(done_handler done) = 0;
    /// Releases; errc::not_held when it was lost first.
    virtual void release(done_handler done) = 0;
    /// Why -n did not get it.
    virtual std::string busy_message() const = 0;
    /// Why the last acquire failed, in words (Mutex::failure_detail()).
    virtual std::string failure_detail() const = 0;
};

/// The lock at the one path, its node named in `names`; several paths: the
/// lock set (zklock's names); with `permits`, one of that many permits of the
/// semaphore at the one path (zklock's names only). `lock_delay`: as
/// MutexOptions::lock_delay. node_path() of a set: its nodes, a line each.
std::unique_ptr<holding> make_holding(boost::asio::io_context& io, Session& session,
                                      const std::vector<std::string>& paths, std::optional<std::size_t> permits,
                                      node_names names, std::chrono::milliseconds lock_delay);

} // namespace zklock::cli
