// What the Locks of one RedisLockService or RedlockService share: the masters
// (a command connection and a subscriber each), the strand and thread they run
// on, the options, and (live_locks) the live locks the service ends with it.
#pragma once

#include "backends/key_lease/live_locks.hpp"
#include "support/async_support.hpp"
#include "backends/redis/connection.hpp"
#include "backends/redis/subscriber.hpp"

#include <zklock/redis/redis_lock_service.hpp>

#include <boost/asio/post.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

namespace redis {

struct master {
    std::shared_ptr<connection> commands;
    std::shared_ptr<subscriber> wakeups;
};

/// What a service of this family (`backend`: "redis" or "redlock") offers and does not.
lock_capabilities capabilities_of(std::string_view backend) noexcept;

} // namespace redis

struct redis_context : live_locks {
    std::vector<redis_address> addresses;  // first: validated before any thread starts
    std::shared_ptr<own_context> own;  // the io_context outlives the connections
    boost::asio::any_io_executor executor;
    redis::strand_type strand;
    RedisOptions options;
    std::string_view backend;
    std::vector<redis::master> masters;
    std::size_t quorum = 1;
    std::chrono::milliseconds drift{};

    /// Throws zklock::error (errc::invalid_argument) for options or addresses it refuses.
    redis_context(const std::vector<std::string>& host_ports, RedisOptions opts, std::string_view name);

    bool on_thread() const noexcept {
        if (own) return own->ioc.get_executor().running_in_this_thread();
        return strand.running_in_this_thread();
    }

    /// Hands a record to options.log (source: the backend's name), when it wants it.
    void log(log_level level, const std::string& message) const;

    /// Runs on the strand, and waits for it unless called there.
    template <class F> void run_and_wait(F fn) {
        if (on_thread()) return fn();
        std::promise<void> done;
        boost::asio::post(strand, [&] {
            fn();
            done.set_value();
        });
        done.get_future().wait();
    }

    /// Posts to the strand; once the own thread has ended (the service is gone)
    /// nothing runs it, so fn runs here and finds the service closed.
    template <class F> void post(F&& fn) {
        if (own && own->done) return fn();
        boost::asio::post(strand, std::forward<F>(fn));
    }

    /// Strand: ends the live locks first when `graceful` (the service ends),
    /// then closes every connection.
    void close(bool graceful);

private:
    static std::vector<redis_address> validate(const std::vector<std::string>& host_ports, const RedisOptions& opts);
};

} // namespace zklock::detail
