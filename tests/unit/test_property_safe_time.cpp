// Property tests (RapidCheck) of the safe-time budget's arithmetic
// (fsm/safe_time.hpp) against its claim: the session lives on the server
// until the timeout has passed on the server's clock since it heard us, and
// the margin covers a server clock up to 1% faster than ours. Modelled in
// exact integer nanoseconds: a budget B for timeout T is covered when
// B * 101 <= T * 100 (B <= T / 1.01).
#include "fsm/safe_time.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cstdint>

using namespace zklock::detail;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::steady_clock;

namespace {

/// Session timeouts as servers negotiate them (mostly from 2 to 20 ticks of a
/// tick from a few ms to seconds: under a minute), and any up to 11 hours.
rc::Gen<milliseconds> timeouts() {
    const auto ms = rc::gen::oneOf(rc::gen::inRange<std::int64_t>(1, 60'001),
                                   rc::gen::inRange<std::int64_t>(1, 40'000'001));
    return rc::gen::map(ms, [](std::int64_t n) { return milliseconds(n); });
}

steady_clock::time_point heard_at(std::int64_t ns) { return steady_clock::time_point(nanoseconds(ns)); }

} // namespace

RC_GTEST_PROP(SafeTimeProperty, TheBudgetEndsBeforeAServerClockOnePercentFastExpiresTheSession, ()) {
    const auto timeout = *timeouts();
    const auto heard = heard_at(*rc::gen::inRange<std::int64_t>(1, std::int64_t{1} << 60));
    const auto budget = nanoseconds(safe_until(heard, timeout) - heard).count();
    const auto t = nanoseconds(timeout).count();
    RC_ASSERT(budget >= 0);
    RC_ASSERT(budget * 101 <= t * 100);
}

RC_GTEST_PROP(SafeTimeProperty, TheMarginGivesUpNoMoreThanOnePercentAndAMillisecond, ()) {
    const auto timeout = *timeouts();
    const auto heard = heard_at(*rc::gen::inRange<std::int64_t>(1, std::int64_t{1} << 60));
    const auto budget = nanoseconds(safe_until(heard, timeout) - heard).count();
    const auto t = nanoseconds(timeout).count();
    RC_ASSERT(budget * 100 >= t * 99 - 100'000'000);  // T * 0.99 - 1 ms
}

RC_GTEST_PROP(SafeTimeProperty, TheBudgetGrowsWithTheTimeoutAndTheLastHeard, ()) {
    const auto t1 = *timeouts();
    const auto t2 = *timeouts();
    const auto h1 = *rc::gen::inRange<std::int64_t>(1, std::int64_t{1} << 60);
    const auto h2 = *rc::gen::inRange<std::int64_t>(1, std::int64_t{1} << 60);
    if (t1 <= t2) RC_ASSERT(safe_until(heard_at(h1), t1) <= safe_until(heard_at(h1), t2));
    if (h1 <= h2) RC_ASSERT(safe_until(heard_at(h1), t1) <= safe_until(heard_at(h2), t1));
}

RC_GTEST_PROP(SafeTimeProperty, NothingHeardOrNoTimeoutIsNoBudget, ()) {
    const auto timeout = *timeouts();
    RC_ASSERT(safe_until(steady_clock::time_point{}, timeout) == steady_clock::time_point{});
    const auto heard = heard_at(*rc::gen::inRange<std::int64_t>(1, std::int64_t{1} << 60));
    RC_ASSERT(safe_until(heard, milliseconds(-*rc::gen::inRange<std::int64_t>(0, 1000))) == steady_clock::time_point{});
}
