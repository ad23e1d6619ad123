// Deadlines of the timed acquires (try_lock_for, try_lock_until): the public
// templates of lock.hpp turn a duration or a time point of any clock into one
// steady-clock deadline, without overflow.
#pragma once

#include <zklock/export.hpp>

#include <chrono>
#include <optional>

namespace zklock::detail {

/// Now on the clock the library measures deadlines with: steady_clock's (the
/// deterministic simulation's build of the library reads its simulated
/// clock, so that the deadlines these templates make are on it too).
ZKLOCK_EXPORT std::chrono::steady_clock::time_point deadline_clock_now() noexcept;

/// The steady-clock deadline `timeout` from now. A timeout of zero or less is
/// now (already passed: "do not wait"); one later than the clock can represent
/// (hours::max(), ...) is nullopt: no deadline. Never overflows.
template <class Rep, class Period>
std::optional<std::chrono::steady_clock::time_point> deadline_after(const std::chrono::duration<Rep, Period>& timeout) {
    using namespace std::chrono;
    const auto now = deadline_clock_now();
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
