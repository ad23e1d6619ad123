// Property tests (RapidCheck) of lock-delay's handover (fsm/lock_delay.hpp).
// The model: an exclusive queue ahead of our node, its counter anywhere
// (across the wrap); until our grant, the holder at its front leaves by a
// clean release (which records its sequence in the directory's data) or
// without one (its session expired, someone deleted it), and waiters behind
// it leave without a record (cancelled). The rule must never call a handover
// clean when the last holder left without its record (safety: the grant
// waits lock_delay), and must call it clean when every node left by a clean
// release (no needless delay). At a first listing, the directory read before
// our create and again at the check must show no child gone in between.
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

RC_GTEST_PROP(LockDelayProperty, AFirstListingIsCleanOnlyWhenNoChildWentSinceTheRead, ()) {
    // The directory read before our create: a clean release was its last
    // child change, and `held` children are still there (a semaphore's).
    handover h;
    h.before = directory_before{};
    h.before->exists = true;
    const auto start = *rc::gen::inRange<std::int64_t>(INT32_MAX - 6, std::int64_t{INT32_MAX} + 4);
    h.before->cversion = static_cast<std::int32_t>(static_cast<std::uint32_t>(start));
    std::int32_t ahead = *rc::gen::inRange<std::int32_t>(0, 3);
    h.before->num_children = ahead;
    h.before->pzxid = h.before->mzxid = 40;
    h.before->data.released = 1;
    // Then other contenders come and go, as ZooKeeper counts it (one per
    // create, one per delete): before our create, each new node is ahead of
    // us; after it, behind.
    auto cversion = static_cast<std::uint32_t>(start);
    std::int32_t behind = 0;
    bool someone_left = false;
    const auto change = [&](bool ours_made) {
        ++cversion;
        const auto what = *rc::gen::inRange<int>(0, 3);
        if (what == 0) {
            ours_made ? ++behind : ++ahead;
        } else if (what == 1 && ahead > 0) {
            --ahead;
            someone_left = true;
        } else if (what == 2 && behind > 0) {
            --behind;
            someone_left = true;
        } else {
            --cversion;  // nothing to delete
        }
    };
    for (auto n = *rc::gen::inRange<int>(0, 4); n > 0; --n) change(false);
    ++cversion;  // our create
    for (auto n = *rc::gen::inRange<int>(0, 4); n > 0; --n) change(true);
    for (std::int32_t s = 0; s < ahead; ++s) h.ahead_now.push_back(s);
    h.checked = child_counters{static_cast<std::int32_t>(cversion), ahead + 1 + behind};
    const bool judged_clean = clean_handover(h);
    if (judged_clean) RC_ASSERT(!someone_left);
    if (!someone_left) RC_ASSERT(judged_clean);
}
