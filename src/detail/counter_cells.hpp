// The counters a backend keeps for Lock::counters(): written on the backend's
// strand, read from any thread.
#pragma once

#include <zklock/lock.hpp>

#include <atomic>
#include <cstdint>

namespace zklock::detail {

struct counter_cells {
    std::atomic<std::uint64_t> acquisitions{0}, attempts{0}, wakeups{0}, timer_retries{0};

    static void bump(std::atomic<std::uint64_t>& cell) noexcept { cell.fetch_add(1, std::memory_order_relaxed); }

    lock_counters snapshot() const noexcept {
        return {acquisitions.load(std::memory_order_relaxed), attempts.load(std::memory_order_relaxed),
                wakeups.load(std::memory_order_relaxed), timer_retries.load(std::memory_order_relaxed)};
    }
};

} // namespace zklock::detail
