// Helpers of the tests that order holders by time (test_interop_kazoo.cpp,
// test_interop_curator.cpp, test_mixed_recipes.cpp): CLOCK_MONOTONIC stamps,
// which every process on this machine reads alike, and an acquire's completion
// with its stamp.
#pragma once

#include "support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <system_error>

#include <time.h>

namespace zklock::test {

/// CLOCK_MONOTONIC in nanoseconds (Python's time.monotonic_ns() reads the same clock).
inline std::int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// An acquire's completion and the time it came. The handler shares the state,
/// so a completion that runs after the test gave up touches nothing freed.
struct grant {
    std::promise<std::error_code> done;
    std::future<std::error_code> result = done.get_future();
    std::atomic<std::int64_t> at{0};

    static std::shared_ptr<grant> make() { return std::make_shared<grant>(); }
};

/// The completion handler of an async acquire that fills `g` (void(std::error_code),
/// or with a result after the code, as async_campaign's Leadership).
inline auto on_grant(std::shared_ptr<grant> g) {
    return [g = std::move(g)](std::error_code ec, auto&&...) {
        g->at = monotonic_ns();
        g->done.set_value(ec);
    };
}

/// True while the acquire behind `g` has not completed.
inline bool pending(const std::shared_ptr<grant>& g) {
    return g->result.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

/// Waits (deadline 60 s) until `position()` has a value, i.e. a zklock waiter
/// listed the queue and decided, and returns it.
template <class F> std::optional<std::size_t> decided_position(F position) {
    EXPECT_TRUE(wait_until([&] { return position().has_value(); }, std::chrono::seconds(60)))
        << "the zklock waiter never listed the queue";
    return position();
}

} // namespace zklock::test
