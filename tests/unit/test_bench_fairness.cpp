// zklock bench's fairness figures (lab/runs/fairness.cpp) against
// their definitions, counted pair by pair.
#include "runs/fairness.hpp"

#include <gtest/gtest.h>

#include <random>

namespace zklock::cli {
namespace {

using std::chrono::milliseconds;
const auto t0 = std::chrono::steady_clock::time_point{};

grant_record at(int requested_ms, int granted_ms) {
    return {t0 + milliseconds(requested_ms), t0 + milliseconds(granted_ms), t0 + milliseconds(granted_ms)};
}

// The definition: for each request, the grants asked for later and granted earlier.
int most_overtaken_by_pairs(const std::vector<grant_record>& grants) {
    int most = 0;
    for (const auto& r : grants) {
        int n = 0;
        for (const auto& g : grants)
            if (g.requested > r.requested && g.granted < r.granted) ++n;
        most = std::max(most, n);
    }
    return most;
}

TEST(BenchFairness, FifoGrantsOvertakeNobody) {
    const std::vector<grant_record> fifo = {at(0, 5), at(1, 10), at(2, 15), at(3, 20)};
    EXPECT_EQ(out_of_order_grants(fifo), 0);
    EXPECT_EQ(most_overtaken(fifo), 0);
}

TEST(BenchFairness, ALateRequestServedFirstOvertakesEveryEarlierWaiter) {
    // Requests at 0, 1, 2; the one of 2 is granted first, then 0, then 1.
    const std::vector<grant_record> grants = {at(0, 20), at(1, 30), at(2, 10)};
    EXPECT_EQ(out_of_order_grants(grants), 1);
    EXPECT_EQ(most_overtaken(grants), 1);
    // The request of 0 waits while 1, 2 and 3 all go first.
    const std::vector<grant_record> starved = {at(0, 40), at(1, 10), at(2, 20), at(3, 30)};
    EXPECT_EQ(most_overtaken(starved), 3);
}

TEST(BenchFairness, RequestsOfTheSameMomentDoNotOvertakeEachOther) {
    const std::vector<grant_record> grants = {at(5, 20), at(5, 10), at(5, 30)};
    EXPECT_EQ(most_overtaken(grants), 0);
}

TEST(BenchFairness, MostOvertakenAgreesWithItsDefinitionOnRandomRuns) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> time(0, 50);  // small: many equal moments
    for (int run = 0; run < 200; ++run) {
        std::vector<grant_record> grants;
        const int n = 1 + run % 40;
        for (int i = 0; i < n; ++i) {
            const int requested = time(rng);
            grants.push_back(at(requested, requested + time(rng)));
        }
        EXPECT_EQ(most_overtaken(grants), most_overtaken_by_pairs(grants)) << "run " << run;
    }
}

} // namespace
} // namespace zklock::cli
