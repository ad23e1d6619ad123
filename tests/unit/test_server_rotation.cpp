// Where the Session moves the C client's position after a refusal, so that a
// round of connects reaches every address (fsm/server_rotation.hpp).
#include "fsm/server_rotation.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using zklock::detail::steps_to_untried;

namespace {
const std::vector<std::string> two{"127.0.0.1:1", "127.0.0.1:2"};
const std::vector<std::string> four{"a:1", "b:1", "c:1", "d:1"};
} // namespace

TEST(ServerRotation, TheNaturalNextWhenItHasNotRefused) {
    EXPECT_EQ(steps_to_untried(two, {}), 0u);
    EXPECT_EQ(steps_to_untried(two, {"127.0.0.1:1"}), 0u);  // at :1, the next connect goes to :2
    EXPECT_EQ(steps_to_untried(four, {"a:1"}), 0u);
}

// The C client's own second move would skip the next address: with two
// addresses it comes back to the one that refused; the Session moves it on.
TEST(ServerRotation, SkipsTheAddressesThatRefusedInThisRound) {
    EXPECT_EQ(steps_to_untried(two, {"127.0.0.1:2"}), 1u);           // at :1 -> :2 refused; move to :2 -> next :1
    EXPECT_EQ(steps_to_untried(four, {"b:1", "c:1"}), 2u);           // -> d
    EXPECT_EQ(steps_to_untried(four, {"b:1", "c:1", "d:1"}), 3u);    // -> a, the position itself
}

TEST(ServerRotation, NothingToDoWhenEveryAddressRefusedOrNoneIsKnown) {
    EXPECT_EQ(steps_to_untried(two, {"127.0.0.1:1", "127.0.0.1:2"}), std::nullopt);
    EXPECT_EQ(steps_to_untried({}, {}), std::nullopt);
}

// A round of refusals, each followed by the C client's two moves and the
// Session's steps, reaches every address once, for every list length (the
// C client alone reaches only every other address when the length is even).
TEST(ServerRotation, ARoundReachesEveryAddressWithTheClientsDoubleMove) {
    for (std::size_t n = 1; n <= 7; ++n) {
        std::vector<std::string> ring;
        for (std::size_t i = 0; i < n; ++i) ring.push_back("h" + std::to_string(i) + ":1");
        std::size_t position = n - 1;  // the next connect goes to h0
        std::set<std::string> refused;
        for (std::size_t attempt = 0; attempt < n; ++attempt) {
            position = (position + 1) % n;  // zookeeper_interest's move, then the connect
            const auto tried = ring[position];
            EXPECT_FALSE(refused.contains(tried)) << n << " addresses: " << tried << " tried twice in a round";
            refused.insert(tried);
            position = (position + 1) % n;  // handle_error's move
            std::vector<std::string> seen;  // the ring as the Session reads it, from the position
            for (std::size_t i = 0; i < n; ++i) seen.push_back(ring[(position + i) % n]);
            if (const auto steps = steps_to_untried(seen, refused)) position = (position + *steps) % n;
        }
        EXPECT_EQ(refused.size(), n);
    }
}
