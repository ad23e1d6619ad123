// Property tests (RapidCheck) of lock-set ordering (MultiMutex): every set
// creates its nodes in one transaction, so the server orders any two sets the
// same way in every queue they share. The model: a set holds exactly when no
// live set committed before it shares a directory with it. Against it, a
// generated run of sets arriving, leaving (released or cancelled) and their
// decisions by decide_set() on the listings the server would give, with each
// directory's counter starting anywhere (across the wrap).
#include "fsm/lock_set.hpp"

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
using zklock::test::node;

namespace {

struct live_set {
    std::vector<std::size_t> dirs;    // the directories it queues in
    std::vector<std::string> names;   // its node in each, in the order of dirs
};

} // namespace

RC_GTEST_PROP(LockSetProperty, ASetHoldsExactlyWhenNoEarlierLiveSetSharesAQueue, ()) {
    const auto dirs = *rc::gen::inRange<std::size_t>(1, 5);
    std::vector<std::int32_t> counter(dirs);
    for (auto& c : counter) c = *rc::gen::inRange<std::int32_t>(INT32_MAX - 20, INT32_MAX);  // wraps in the run
    std::vector<std::vector<std::string>> listing(dirs);
    std::vector<live_set> live;  // in commit order
    const auto steps = *rc::gen::inRange(1, 60);
    for (int step = 0; step < steps; ++step) {
        if (live.empty() || *rc::gen::inRange(0, 3) > 0) {
            // A set commits: one transaction, one node per directory of its set.
            live_set s;
            for (std::size_t d = 0; d < dirs; ++d)
                if (*rc::gen::arbitrary<bool>()) s.dirs.push_back(d);
            if (s.dirs.empty()) s.dirs.push_back(*rc::gen::inRange<std::size_t>(0, dirs));
            const auto tag = "set" + std::to_string(step);
            for (const auto d : s.dirs) {
                const auto seq = counter[d];
                counter[d] = static_cast<std::int32_t>(static_cast<std::uint32_t>(counter[d]) + 1);
                s.names.push_back(node(tag, seq));
                listing[d].push_back(s.names.back());
            }
            live.push_back(std::move(s));
        } else {
            // A set leaves (released, cancelled, or its session gone): every node of it.
            const auto i = *rc::gen::inRange<std::size_t>(0, live.size());
            for (std::size_t k = 0; k < live[i].dirs.size(); ++k) {
                auto& l = listing[live[i].dirs[k]];
                l.erase(std::find(l.begin(), l.end(), live[i].names[k]));
            }
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        }

        std::vector<bool> queue_held(dirs, false);
        bool someone_holds = false;
        for (std::size_t i = 0; i < live.size(); ++i) {
            std::vector<std::vector<std::string>> listings;
            for (const auto d : live[i].dirs) listings.push_back(listing[d]);
            const auto decision = decide_set(listings, live[i].names);
            RC_ASSERT(decision.found);
            bool earlier_shares = false;
            for (std::size_t j = 0; j < i; ++j)
                for (const auto d : live[j].dirs)
                    earlier_shares = earlier_shares ||
                                     std::find(live[i].dirs.begin(), live[i].dirs.end(), d) != live[i].dirs.end();
            RC_ASSERT(decision.acquired == !earlier_shares);
            if (!decision.acquired) continue;
            someone_holds = true;
            for (const auto d : live[i].dirs) {
                RC_ASSERT(!queue_held[d]);  // one holder per queue
                queue_held[d] = true;
            }
        }
        RC_ASSERT(live.empty() || someone_holds);  // no deadlock: the oldest live set holds
    }
}

RC_GTEST_PROP(LockSetProperty, ASetsNodeDataSplitsBackIntoTheUsersDataAndItsPaths, (std::string data)) {
    const auto count = *rc::gen::inRange(0, 5);
    std::vector<std::string> paths;
    for (int i = 0; i < count; ++i) paths.push_back("/locks/" + std::to_string(*rc::gen::inRange(0, 1000)) + "/q");
    const auto back = parse_set_node_data(set_node_data(data, paths));
    RC_ASSERT(back.data == data);
    RC_ASSERT(back.paths == paths);
}
