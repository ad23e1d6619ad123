// What the Locks of one MemcachedLockService share: the server's client, the
// thread its blocking calls run on, the options, and (live_locks) the live
// locks the service ends with it.
#pragma once

#include "backends/key_lease/live_locks.hpp"
#include "support/async_support.hpp"
#include "backends/memcached/memcached_client.hpp"

#include <zklock/memcached/memcached_lock_service.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>

#include <memory>
#include <string>

namespace zklock::detail {

namespace memcached {
/// What the memcached backend offers and does not.
lock_capabilities capabilities() noexcept;
} // namespace memcached

struct memcached_context : live_locks {
    memcached::address where;               // first: validated before the thread starts
    MemcachedOptions options;
    std::shared_ptr<own_context> own;       // the thread every memcached call runs on
    boost::asio::any_io_executor executor;  // where completions go
    memcached::client client;               // own thread only

    /// Throws zklock::error (errc::invalid_argument) for an address or options it refuses.
    memcached_context(const std::string& address_text, MemcachedOptions opts);

    bool on_thread() const noexcept { return own->ioc.get_executor().running_in_this_thread(); }
    boost::asio::io_context& io() noexcept { return own->ioc; }

    /// Runs fn on the thread; once the thread has ended (the service is gone)
    /// fn runs here and finds the service closed.
    template <class F> void post(F&& fn) {
        if (own->done) return fn();
        boost::asio::post(own->ioc, std::forward<F>(fn));
    }

    void log(log_level level, const std::string& message) const;
    /// Thread: ends the live locks (they release), then closes the connection.
    void close();
};

} // namespace zklock::detail
