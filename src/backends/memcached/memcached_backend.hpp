// One Lock of a MemcachedLockService: a key_lease_backend whose rounds are
// memcached commands. Its parts live in three files:
//   memcached_backend.cpp   release (gets + cas + delete), the failure detail
//   memcached_acquire.cpp   add() rounds and the polling between them
//   memcached_watchdog.cpp  the held lease's renewal: gets + cas
// Every member but the LockBackend interface runs on the service's thread; the
// decisions are memcached_steps'.
#pragma once

#include "backends/key_lease/key_lease_backend.hpp"
#include "backends/memcached/memcached_context.hpp"

#include <zklock/lock.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>

namespace zklock::detail::memcached {

class memcached_backend : public key_lease_backend<memcached_backend, memcached_context> {
public:
    memcached_backend(std::shared_ptr<memcached_context> ctx, std::string key);

    std::int64_t fencing_token() const noexcept override { return 0; }  // memcached has none
    lock_capabilities capabilities() const noexcept override { return memcached::capabilities(); }
    std::string failure_detail() const override;

private:
    friend class key_lease_backend<memcached_backend, memcached_context>;

    static constexpr const char* expired_text = "its lease ran out before a renewal reached the server";
    static constexpr const char* taken_text = "its key no longer holds its owner id";

    /// gets, compare with `owner`, cas, delete: a release's outcome (memcached::after_release).
    std::error_code delete_if_ours(const std::string& owner);
    void let_go(const std::function<void(std::error_code)>& done);

    // acquire (memcached_acquire.cpp)
    void attempt();
    /// Waits a jittered, growing backoff before the next add().
    void poll_again();
    void acquire_ended(std::error_code ec);

    // hold (memcached_watchdog.cpp)
    void tick();

    const std::uint32_t ttl_s_;
    // any thread
    mutable std::mutex detail_mutex_;
    std::string failure_detail_;
};

} // namespace zklock::detail::memcached
