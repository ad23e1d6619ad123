// Deadlines of the timed acquires (try_lock_for, try_lock_until): the public
// templates of lock.hpp turn a duration or a time point of any clock into one
// steady-clock deadline, without overflow.
#pragma once

#include <chrono>
#include <optional>

// The clock the deadlines are read on: steady_clock, as the library's. The
// deterministic simulation (tests/sim), which compiles the library again on a
// simulated clock, names that clock here; it is not an option for programs.
#ifndef ZKLOCK_DEADLINE_CLOCK
#define ZKLOCK_DEADLINE_CLOCK std::chrono::steady_clock
#endif

namespace zklock::detail {

/// The steady-clock deadline `timeout` from now. A timeout of zero or less is
/// now (already passed: "do not wait"); one later than the clock can represent
/// (hours::max(), ...) is nullopt: no deadline. Never overflows.
template <class Rep, class Period>
std::optional<std::chrono::steady_clock::time_point> deadline_after(const std::chrono::duration<Rep, Period>& timeout) {
    using namespace std::chrono;
    const steady_clock::time_point now = ZKLOCK_DEADLINE_CLOCK::now();
    if (timeout <= duration<Rep, Period>::zero()) return now;
    // Compare in floating point: hours::max() overflows any integer conversion.
    const duration<long double> wanted = timeout;
    const duration<long double> room = steady_clock::time_point::max() - now;
    if (wanted >= room / 2) return std::nullopt;  // over a century away: wait forever
    return now + ceil<steady_clock::duration>(wanted);
}

/// The steady-clock deadline for a time point of any clock (see deadline_after).
template <class Clock, class Duration>
std::optional<std::chrono::steady_clock::time_point> deadline_at(const std::chrono::time_point<Clock, Duration>& t) {
    using std::chrono::duration;
    const duration<long double> remaining =
        duration<long double>(t.time_since_epoch()) - duration<long double>(Clock::now().time_since_epoch());
    return deadline_after(remaining);
}

} // namespace zklock::detail
