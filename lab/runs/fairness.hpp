// zklock bench's fairness figures of a contended run, from each grant's three
// moments (pure: unit-tested in tests/unit/test_bench_fairness.cpp).
#pragma once

#include <chrono>
#include <vector>

namespace zklock::cli {

/// One measured hold: when its client asked, was granted, and released.
struct grant_record {
    std::chrono::steady_clock::time_point requested, granted, released;
};

/// Grants that overtook an earlier request: the lock went to a client that
/// asked after another client that was still waiting (by steady_clock, one
/// process).
int out_of_order_grants(std::vector<grant_record> grants);

/// The most grants that went, ahead of one request, to clients that asked
/// after it (requests made at the same moment do not overtake each other).
/// O(n log n).
int most_overtaken(std::vector<grant_record> grants);

} // namespace zklock::cli
