// The counters a backend keeps for Lock::stats(): written on the backend's
// strand, read from any thread. (The times waited and held are the acquire
// gate's, lock/acquire_gate.hpp.)
#pragma once

#include <zklock/lock.hpp>

#include <atomic>
#include <cstdint>

namespace zklock::detail {

struct counter_cells {
    std::atomic<std::uint64_t> acquisitions{0}, attempts{0}, wakeups{0}, timer_retries{0};

    static void bump(std::atomic<std::uint64_t>& cell) noexcept { cell.fetch_add(1, std::memory_order_relaxed); }

    lock_stats snapshot() const noexcept {
        lock_stats s;
        s.acquisitions = acquisitions.load(std::memory_order_relaxed);
        s.attempts = attempts.load(std::memory_order_relaxed);
        s.wakeups = wakeups.load(std::memory_order_relaxed);
        s.timer_retries = timer_retries.load(std::memory_order_relaxed);
        return s;
    }
};

} // namespace zklock::detail
