// What a key-lease service (RedisLockService, RedlockService,
// MemcachedLockService) keeps of its Locks beside its connections: their ids,
// the closers that end them when the service ends first, the closed flag, and
// the random numbers they draw. Each service's context derives from it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>

namespace zklock::detail {

struct live_locks {
    std::atomic<std::uint64_t> next_id{1};
    std::atomic<bool> closed{false};  // set on the service's thread; commands then fail with session_closed at once
    std::mutex closers_mutex;
    std::map<std::uint64_t, std::function<void()>> closers;  // of the live locks: end them when the service ends
    // the service's thread only
    std::mt19937_64 rng{std::random_device{}() ^ (std::uint64_t(std::random_device{}()) << 32)};

    /// The service's thread: ends every live lock (each gives up its acquire,
    /// releases what it holds and reports errc::session_closed).
    void end_live_locks() {
        std::map<std::uint64_t, std::function<void()>> live;
        {
            std::lock_guard lk(closers_mutex);
            live = closers;
        }
        for (auto& [id, c] : live) c();
    }

    /// 128 random bits in hex: a new holder token.
    std::string random_token() {
        char buf[33];
        std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                      static_cast<unsigned long long>(rng()));
        return buf;
    }

    /// A random duration in [lo, hi].
    std::chrono::milliseconds uniform(std::chrono::milliseconds lo, std::chrono::milliseconds hi) {
        return std::chrono::milliseconds(std::uniform_int_distribution<long long>(lo.count(), hi.count())(rng));
    }
};

} // namespace zklock::detail
