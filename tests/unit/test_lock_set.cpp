// The lock set's decisions (MultiMutex): which queues hold, whom to watch,
// recovery by guid, and the property the design rests on: when every set's
// nodes are created by one transaction, the "waits for" relation cannot form
// a cycle, so a simulated run always ends with every set served.
#include "fsm/lock_set.hpp"
#include <zklock/error.hpp>

#include "node_name_samples.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace zklock::detail;
using zklock::test::node;
using zklock::test::seq;


TEST(LockSet, ValidSetsAreAccepted) {
    EXPECT_TRUE(validate_lock_set({"/locks/a"}));
    EXPECT_TRUE(validate_lock_set({"/locks/a", "/locks/b", "/other/c"}));
    EXPECT_TRUE(validate_lock_set({"/locks/a", "/locks/ab"})) << "a prefix that is not a parent is not nesting";
}

TEST(LockSet, EmptyDuplicateNestedAndInvalidPathsAreRefusedWithAReason) {
    const auto empty = validate_lock_set({});
    EXPECT_EQ(empty.error, zklock::errc::invalid_path);
    EXPECT_NE(empty.reason.find("at least one"), std::string::npos);

    const auto twice = validate_lock_set({"/locks/a", "/locks/b", "/locks/a"});
    EXPECT_EQ(twice.error, zklock::errc::invalid_path);
    EXPECT_NE(twice.reason.find("'/locks/a' is twice"), std::string::npos) << twice.reason;

    for (const auto& set : {std::vector<std::string>{"/locks/a", "/locks/a/b"}, {"/locks/a/b", "/locks/a"}}) {
        const auto nested = validate_lock_set(set);
        EXPECT_EQ(nested.error, zklock::errc::invalid_path);
        EXPECT_NE(nested.reason.find("'/locks/a/b' is under '/locks/a'"), std::string::npos) << nested.reason;
    }

    const auto bad = validate_lock_set({"/locks/a", "relative"});
    EXPECT_EQ(bad.error, zklock::errc::invalid_path);
    EXPECT_NE(bad.reason.find("'relative'"), std::string::npos) << bad.reason;
}

TEST(LockSet, HeldOnlyWhenFirstInEveryQueue) {
    const std::vector<std::string> mine = {node("me", 5), node("me", 9)};
    // First in the first queue, behind a plain mutex node in the second.
    auto d = decide_set({{mine[0], node("x", 6)}, {node("y", 8), mine[1], node("z", 10)}}, mine);
    EXPECT_TRUE(d.found);
    EXPECT_FALSE(d.acquired);
    ASSERT_EQ(d.queues.size(), 2u);
    EXPECT_TRUE(d.queues[0].acquired);
    EXPECT_FALSE(d.queues[1].acquired);
    EXPECT_EQ(d.queues[1].watch, std::vector<std::string>{node("y", 8)});
    EXPECT_TRUE(d.queues[1].watch_is_last_blocker);
    EXPECT_EQ(d.queues[1].position, 1u);

    d = decide_set({{mine[0]}, {mine[1], node("z", 10)}}, mine);
    EXPECT_TRUE(d.acquired);
}

TEST(LockSet, AReaderOrAPeersNodeAheadBlocksLikeAnyContender) {
    const std::vector<std::string> mine = {node("me", 3)};
    const auto d = decide_set({{"_c_" + zklock::test::uuid + "-read-" + seq(1), mine[0]}}, mine);
    EXPECT_FALSE(d.acquired);
    EXPECT_EQ(d.queues[0].watch.size(), 1u);
}

TEST(LockSet, AQueueWithoutOurNodeIsReportedMissing) {
    const std::vector<std::string> mine = {node("me", 1), node("me", 2)};
    const auto d = decide_set({{mine[0]}, {node("other", 1)}}, mine);
    EXPECT_FALSE(d.found);
    EXPECT_FALSE(d.acquired);
    EXPECT_EQ(d.missing, std::vector<std::size_t>{1});
}

TEST(LockSet, RecoveryFindsTheGuidInEveryDirectoryInNoneOrInSome) {
    const std::string guid = zklock::test::uuid;
    auto r = find_set_by_guid({{node(guid, 4), node("x", 3)}, {node(guid, 7)}}, guid);
    EXPECT_EQ(r.found, set_recovery::outcome::all);
    EXPECT_EQ(r.names[1], node(guid, 7));
    r = find_set_by_guid({{node("x", 3)}, {}}, guid);
    EXPECT_EQ(r.found, set_recovery::outcome::none);
    r = find_set_by_guid({{node("x", 3)}, {node(guid, 7)}}, guid);
    EXPECT_EQ(r.found, set_recovery::outcome::partial);
    EXPECT_FALSE(r.names[0]);
}

TEST(LockSet, NodeDataCarriesTheSetsPathsAndSplitsBack) {
    const auto data = set_node_data("host:42", {"/locks/a", "/locks/b c"});
    EXPECT_EQ(data, "host:42\nzklock lock set:\n/locks/a\n/locks/b c");
    const auto back = parse_set_node_data(data);
    EXPECT_EQ(back.data, "host:42");
    EXPECT_EQ(back.paths, (std::vector<std::string>{"/locks/a", "/locks/b c"}));
    const auto plain = parse_set_node_data("host:42");
    EXPECT_EQ(plain.data, "host:42");
    EXPECT_TRUE(plain.paths.empty());
}

// A simulated ensemble: sets arrive one transaction at a time (one sequence
// per directory, in commit order), holders leave, and every round each
// waiting set is judged by decide_set alone. Checks mutual exclusion per
// queue and that the run never gets stuck: while anyone waits, someone holds.
// (With the sets' nodes created one at a time in the callers' orders, the
// same run deadlocks: see TheSameRunWithNodesCreatedOneByOneCanDeadlock.)
namespace {
struct sim {
    std::size_t dirs;
    std::vector<std::int32_t> counter;                 // per directory
    std::vector<std::vector<std::string>> children;    // per directory
    std::map<int, std::vector<std::string>> names;     // per set: its node in each directory ("" = not in it)
    std::set<int> held;

    explicit sim(std::size_t n) : dirs(n), counter(n, 0), children(n) {}
    void enqueue(int id, const std::vector<std::size_t>& in) {
        names[id].assign(dirs, "");
        for (auto d : in) {
            names[id][d] = node("set" + std::to_string(id), counter[d]++);
            children[d].push_back(names[id][d]);
        }
    }
    bool holds(int id) const {
        std::vector<std::vector<std::string>> listings;
        std::vector<std::string> mine;
        for (std::size_t d = 0; d < dirs; ++d)
            if (!names.at(id)[d].empty()) {
                listings.push_back(children[d]);
                mine.push_back(names.at(id)[d]);
            }
        return decide_set(listings, mine).acquired;
    }
    void leave(int id) {
        for (std::size_t d = 0; d < dirs; ++d)
            std::erase(children[d], names[id][d]);
        names.erase(id);
        held.erase(id);
    }
};
} // namespace

TEST(LockSet, OneTransactionPerSetNeverDeadlocksAndNeverGrantsAQueueTwice) {
    std::mt19937 rng(7);
    constexpr std::size_t dirs = 5;
    sim s(dirs);
    int next = 0;
    for (int round = 0; round < 3000; ++round) {
        // Arrivals: a random subset of 1-3 directories, one transaction.
        while (s.names.size() < 8) {
            std::vector<std::size_t> all(dirs);
            std::iota(all.begin(), all.end(), 0);
            std::shuffle(all.begin(), all.end(), rng);
            all.resize(1 + rng() % 3);
            s.enqueue(next++, all);
        }
        for (const auto& [id, _] : s.names)
            if (s.holds(id)) s.held.insert(id);
        // Mutual exclusion per directory among holders.
        for (std::size_t d = 0; d < dirs; ++d) {
            int in_d = 0;
            for (int id : s.held) in_d += s.names[id][d].empty() ? 0 : 1;
            ASSERT_LE(in_d, 1) << "two holders in directory " << d << " at round " << round;
        }
        ASSERT_FALSE(s.held.empty()) << "nobody holds while " << s.names.size() << " sets wait: a deadlock";
        // A random holder leaves.
        auto it = s.held.begin();
        std::advance(it, rng() % s.held.size());
        s.leave(*it);
    }
}

// The contrast: two callers take {A, B} and {B, A} one node at a time (as
// single locks taken in the caller's order do); each first node is granted,
// each second waits for the other: nobody can ever hold.
TEST(LockSet, TheSameRunWithNodesCreatedOneByOneCanDeadlock) {
    sim s(2);
    s.enqueue(0, {0});
    s.enqueue(1, {1});
    // Each now holds its first lock and creates its second node.
    s.children[1].push_back(node("set0", s.counter[1]++));
    s.names[0][1] = s.children[1].back();
    s.children[0].push_back(node("set1", s.counter[0]++));
    s.names[1][0] = s.children[0].back();
    EXPECT_FALSE(s.holds(0));
    EXPECT_FALSE(s.holds(1));
}
