// Property tests (RapidCheck) of the queue order: the parent's sequence
// counter is a signed 32-bit int that wraps, and the queue must follow the
// order of creation, modelled over unbounded integers. Each property runs
// 100 generated cases by default (RC_PARAMS="max_success=N" for more); a
// failure prints the shrunk case and the seed to replay it.
#include "fsm/lock_node.hpp"

#include "node_name_samples.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace zklock::detail;
using zklock::test::hex32;
using zklock::test::seq;

namespace {

/// The counter's value for an unbounded creation number, as the server writes it.
std::int32_t wrapped(std::int64_t n) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(n)); }

/// A contender's name in one of the dialects of an exclusive lock.
std::string name_of(int dialect, std::size_t who, std::int32_t s) {
    const auto tag = std::to_string(who);
    switch (dialect) {
    case 0: return node_name_prefix("zk-" + tag) + seq(s);
    case 1: return "_c_" + tag + "-latch-" + seq(s);                   // Curator's LeaderLatch
    case 2: return hex32.substr(0, 32 - tag.size()) + tag + "__lock__" + seq(s);  // kazoo
    default: return "x-" + std::string(16 - tag.size(), '0') + tag + "-" + seq(s);  // the C recipe
    }
}

/// A queue made by the server: `count` creations from counter `start` with
/// gaps (other children made and gone), spanning less than 2^31.
struct queue_model {
    std::vector<std::int64_t> created;  // unbounded creation numbers, increasing
    std::vector<std::string> names;     // created[i]'s name
};

rc::Gen<queue_model> queues(bool one_dialect) {
    return rc::gen::exec([one_dialect] {
        queue_model q;
        // Anywhere, or right before the wrap to INT32_MIN, or before -1 to 0.
        const auto start = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(INT32_MIN, std::int64_t{INT32_MAX} + 1),
                                           rc::gen::inRange<std::int64_t>(INT32_MAX - 200'000, INT32_MAX),
                                           rc::gen::inRange<std::int64_t>(-200'000, 0));
        // Mostly neighbours, now and then children made and gone in between.
        const auto gaps = *rc::gen::container<std::vector<std::int64_t>>(
            rc::gen::oneOf(rc::gen::inRange<std::int64_t>(1, 4), rc::gen::inRange<std::int64_t>(1, 100'000)));
        std::int64_t n = start;
        for (std::size_t i = 0; i < gaps.size() && i < 40; ++i) {
            n += gaps[i];
            q.created.push_back(n);
            q.names.push_back(name_of(one_dialect ? 0 : *rc::gen::inRange(0, 4), i, wrapped(n)));
        }
        return q;
    });
}

std::vector<std::string> shuffled(std::vector<std::string> names) {
    const auto keys = *rc::gen::container<std::vector<int>>(names.size(), rc::gen::arbitrary<int>());
    std::vector<std::size_t> order(names.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    std::vector<std::string> out;
    for (const auto i : order) out.push_back(names[i]);
    return out;
}

} // namespace

RC_GTEST_PROP(QueueOrderProperty, SerialOrderIsCreationOrderWithinHalfTheCounter, ()) {
    const auto a = *rc::gen::inRange<std::int64_t>(INT32_MIN, std::int64_t{INT32_MAX} + 1);
    const auto distance = *rc::gen::inRange<std::int64_t>(-(std::int64_t{1} << 31) + 1, std::int64_t{1} << 31);
    const auto b = a + distance;
    RC_ASSERT(sequence_before(wrapped(a), wrapped(b)) == (a < b));
}

RC_GTEST_PROP(QueueOrderProperty, TheQueueIsInCreationOrderAcrossTheWrap, ()) {
    const auto q = *queues(false);
    const auto sorted = sorted_contenders(shuffled(q.names));
    std::vector<std::string> names;
    for (const auto& n : sorted) names.push_back(n.name);
    RC_ASSERT(names == q.names);
}

RC_GTEST_PROP(QueueOrderProperty, TheMutexRuleGrantsTheFirstCreatedAndWatchesThePredecessor, ()) {
    const auto q = *queues(false);
    RC_PRE(!q.names.empty());
    const auto listing = shuffled(q.names);
    const auto i = *rc::gen::inRange<std::size_t>(0, q.names.size());
    const auto d = decide(queue_rule{}, listing, q.names[i]);
    RC_ASSERT(d.found);
    RC_ASSERT(d.position == i);
    RC_ASSERT(d.acquired == (i == 0));
    if (i > 0) RC_ASSERT(d.watch == std::vector<std::string>{q.names[i - 1]});
    RC_ASSERT(d.last == (i + 1 == q.names.size()));
}

RC_GTEST_PROP(QueueOrderProperty, KPermitsGoToTheFirstKAndAWaiterWatchesTheKAhead, ()) {
    const auto q = *queues(true);  // a semaphore's own nodes
    RC_PRE(!q.names.empty());
    const auto permits = *rc::gen::inRange<std::size_t>(1, 6);
    queue_rule rule;
    rule.permits = permits;
    const auto listing = shuffled(q.names);
    const auto i = *rc::gen::inRange<std::size_t>(0, q.names.size());
    const auto d = decide(rule, listing, q.names[i]);
    RC_ASSERT(d.acquired == (i < permits));
    if (!d.acquired) {
        auto watched = d.watch;
        std::sort(watched.begin(), watched.end());
        std::vector<std::string> ahead(q.names.begin() + static_cast<std::ptrdiff_t>(i - permits),
                                       q.names.begin() + static_cast<std::ptrdiff_t>(i));
        std::sort(ahead.begin(), ahead.end());
        RC_ASSERT(watched == ahead);
    }
}
