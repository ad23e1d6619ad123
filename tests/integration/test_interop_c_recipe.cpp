// ZooKeeper's C lock recipe (src/recipes/lock in ZooKeeper's source tree) names
// its queue node `x-<16 hex session id>-<seq>`, created EPHEMERAL|SEQUENCE by the
// C client. Debian does not package the recipe, so it does not run here: a C
// client session creates the node the recipe would (the same name, flags and
// client library), and the test checks zklock's side, that it counts the node as
// a contender (the c-recipe dialect) and waits for it. The recipe's own side
// (it orders every child by the text after the last '-', zklock's names
// included) is read from its source; docs/interop.md says so.
#include "grant_support.hpp"
#include "support.hpp"

#include <zklock/testing/faults.hpp>

#include <cstdio>

namespace zklock::test {
namespace {

class CRecipeNamesTest : public ServerTest {};

TEST_F(CRecipeNamesTest, AMutexWaitsForTheCRecipesNodeUntilItsSessionEnds) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto s1 = connect(4000ms);
    Mutex first(*s1, path);
    first.lock();  // the parents exist from here on

    // The C recipe's client queues behind first.
    auto c_client = connect(4000ms);
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(c_client->session_id()));
    (void)testing::create_sequential_node(*c_client, path + "/x-" + id + "-");

    auto s2 = connect(4000ms);
    Mutex last(*s2, path);
    const auto granted = grant::make();
    last.async_lock(on_grant(granted));
    std::vector<std::string> dialects;
    for (const auto& c : wait_for_contenders(*observer, path, 3, 60s)) dialects.push_back(c.dialect);
    EXPECT_EQ(dialects, (std::vector<std::string>{"zklock", "c-recipe", "zklock"}));
    EXPECT_EQ(decided_position([&] { return last.queue_position(); }), 2u)
        << "zklock does not count the C recipe's node";

    first.unlock();
    wait_for_contenders(*observer, path, 2, 60s);
    EXPECT_TRUE(pending(granted)) << "zklock acquired beside the C recipe's node";
    const auto c_leave = monotonic_ns();
    c_client.reset();  // closes the session: the recipe's ephemeral node goes with it
    ASSERT_FALSE(get_within(granted->result, 60s));
    EXPECT_LT(c_leave, granted->at.load()) << "zklock acquired while the C recipe's node was ahead of it";
    last.unlock();
}

} // namespace
} // namespace zklock::test
