#include "runs/fairness.hpp"

#include <algorithm>
#include <cstddef>

namespace zklock::cli {

using time_point = std::chrono::steady_clock::time_point;

int out_of_order_grants(std::vector<grant_record> grants) {
    std::sort(grants.begin(), grants.end(), [](const auto& a, const auto& b) { return a.granted < b.granted; });
    int count = 0;
    auto earliest_later_request = time_point::max();
    for (auto it = grants.rbegin(); it != grants.rend(); ++it) {
        if (earliest_later_request < it->requested) ++count;
        earliest_later_request = std::min(earliest_later_request, it->requested);
    }
    return count;
}

// For each request, the grants asked for later and granted earlier: by request
// time, latest first, a Fenwick tree over the grant times' ranks counts the
// grants of later requests granted before this one.
int most_overtaken(std::vector<grant_record> grants) {
    std::vector<time_point> granted;
    for (const auto& g : grants) granted.push_back(g.granted);
    std::sort(granted.begin(), granted.end());
    std::vector<int> tree(granted.size() + 1, 0);
    const auto rank = [&](time_point t) {  // grants strictly before t
        return static_cast<std::size_t>(std::lower_bound(granted.begin(), granted.end(), t) - granted.begin());
    };
    const auto count_below = [&](std::size_t r) {  // added grants of rank < r
        int n = 0;
        for (; r > 0; r -= r & (~r + 1)) n += tree[r];
        return n;
    };
    std::sort(grants.begin(), grants.end(), [](const auto& a, const auto& b) { return a.requested > b.requested; });
    int most = 0;
    for (std::size_t i = 0; i < grants.size();) {
        // Requests made at the same moment do not overtake each other: count the
        // whole group, then add it.
        std::size_t end = i;
        while (end < grants.size() && grants[end].requested == grants[i].requested) ++end;
        for (std::size_t j = i; j < end; ++j) most = std::max(most, count_below(rank(grants[j].granted)));
        for (std::size_t j = i; j < end; ++j)
            for (std::size_t r = rank(grants[j].granted) + 1; r < tree.size(); r += r & (~r + 1)) ++tree[r];
        i = end;
    }
    return most;
}

} // namespace zklock::cli
