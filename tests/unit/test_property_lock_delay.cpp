// Property tests (RapidCheck) of lock-delay's handover (fsm/lock_delay.hpp).
// The model: an exclusive queue ahead of our node, its counter anywhere
// (across the wrap); until our grant, the holder at its front leaves by a
// clean release (which records its sequence in the directory's data) or
// without one (its session expired, someone deleted it), and waiters behind
// it leave without a record (cancelled). The rule must never call a handover
// clean when the last holder left without its record (safety: the grant
// waits lock_delay), and must call it clean when every node left by a clean
// release (no needless delay).
#include "fsm/lock_delay.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace zklock::detail;

RC_GTEST_PROP(LockDelayProperty, AReleaseRecordReadsBackAndKeepsTheDataBesideIt,
              (std::string data, std::int32_t released)) {
    const auto written = with_release_marker(data, released);
    const auto back = split_release_marker(written);
    RC_ASSERT(back.released == std::optional<std::int32_t>(released));
    RC_ASSERT(back.base == split_release_marker(data).base);
}

RC_GTEST_PROP(LockDelayProperty, AHandoverIsCleanOnlyWhenTheLastHolderRecordedItsRelease, ()) {
    const auto start = *rc::gen::inRange<std::int64_t>(INT32_MAX - 10, std::int64_t{INT32_MAX} + 10);
    const auto count = *rc::gen::inRange<std::size_t>(1, 8);
    std::vector<std::int32_t> ahead;  // in queue order
    for (std::size_t i = 0; i < count; ++i)
        ahead.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(start + static_cast<std::int64_t>(i))));
    const bool all_clean = *rc::gen::arbitrary<bool>();

    handover h;
    h.ahead_before = ahead;
    // The record an earlier holder left, or none.
    if (*rc::gen::arbitrary<bool>()) h.now.released = static_cast<std::int32_t>(static_cast<std::uint32_t>(start - 1));
    std::vector<std::int32_t> queue = ahead;
    bool last_holder_clean = true;
    while (!queue.empty()) {
        const bool holder = all_clean || *rc::gen::arbitrary<bool>();
        const auto i = holder ? 0 : *rc::gen::inRange<std::size_t>(0, queue.size());
        const bool clean = all_clean || (i == 0 && *rc::gen::arbitrary<bool>());
        if (clean) h.now.released = queue[i];
        if (i == 0) last_holder_clean = clean;  // the front holds until it leaves
        queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
    }
    h.ahead_now = {};
    h.exclusive = true;
    const bool judged_clean = clean_handover(h);
    if (judged_clean) RC_ASSERT(last_holder_clean);
    if (all_clean) RC_ASSERT(judged_clean);
}

RC_GTEST_PROP(LockDelayProperty, NobodyLeftIsACleanHandover, ()) {
    const auto count = *rc::gen::inRange<std::size_t>(0, 8);
    std::vector<std::int32_t> ahead;
    for (std::size_t i = 0; i < count; ++i) ahead.push_back(*rc::gen::arbitrary<std::int32_t>());
    handover h;
    h.ahead_before = ahead;
    h.ahead_now = ahead;
    h.exclusive = *rc::gen::arbitrary<bool>();
    RC_ASSERT(clean_handover(h));
}
