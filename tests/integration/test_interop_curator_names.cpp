// zklock writing Curator's names (node_names::curator) next to the real Apache
// Curator client: with them, Curator's InterProcessReadWriteLock waits for a
// zklock writer and LeaderLatch for a zklock leader, which they do not with
// zklock's default names (test_interop_curator.cpp shows that side).
//
// Each step waits for the peer's own report that it decided to wait ("watching"
// the zklock node), then checks the order of the CLOCK_MONOTONIC stamps.
#include "curator_fixture.hpp"
#include "grant_support.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/shared_mutex.hpp>

namespace zklock::test {
namespace {

using names = std::vector<std::string>;

MutexOptions curator_names() {
    MutexOptions o;
    o.names = node_names::curator;
    return o;
}

TEST_F(CuratorInteropTest, ReadWriteLockWaitsForAZklockWriterInCuratorsNames) {
    const auto path = lock_path();
    auto curator = peer(path);
    auto session = connect(4000ms);
    SharedMutex writer(*session, path, curator_names());

    // A Curator reader waits for the zklock writer, and enters once it let go.
    writer.lock();
    const auto node = std::filesystem::path(writer.writer().node_path()).filename().string();
    EXPECT_NE(node.find("-__WRIT__"), std::string::npos) << node;
    curator->read("r");
    EXPECT_EQ(curator->wait_for_line("watching", "peer"), names{node})
        << "Curator's reader does not wait for zklock's writer";
    EXPECT_FALSE(curator->printed("acquired", "r")) << "Curator's reader entered beside zklock's writer";
    auto zk_leave = monotonic_ns();
    writer.unlock();
    const auto r_enter = curator->wait_for("acquired", "r");
    ASSERT_TRUE(r_enter);
    EXPECT_LT(zk_leave, *r_enter) << "Curator's reader entered while zklock's writer held";
    curator->release("r");
    ASSERT_TRUE(curator->wait_for("released", "r"));

    // A Curator writer waits for the zklock writer too.
    writer.lock();
    const auto node2 = std::filesystem::path(writer.writer().node_path()).filename().string();
    const auto seen = curator->lines("watching", "peer").size();
    curator->write("w");
    ASSERT_TRUE(wait_until([&] { return curator->lines("watching", "peer").size() > seen; }, 60s)) << curator->output();
    EXPECT_EQ(curator->lines("watching", "peer")[seen], names{node2})
        << "Curator's writer does not wait for zklock's writer";
    EXPECT_FALSE(curator->printed("acquired", "w")) << "Curator's writer entered beside zklock's writer";
    zk_leave = monotonic_ns();
    writer.unlock();
    const auto w_enter = curator->wait_for("acquired", "w");
    ASSERT_TRUE(w_enter);
    EXPECT_LT(zk_leave, *w_enter) << "Curator's writer entered while zklock's writer held";
    curator->release("w");
    ASSERT_TRUE(curator->wait_for("released", "w"));
    EXPECT_TRUE(curator->quit());
}

TEST_F(CuratorInteropTest, ReadWriteLockSharesWithAZklockReaderInCuratorsNamesAndItsWriterWaitsForIt) {
    const auto path = lock_path();
    auto curator = peer(path);
    auto session = connect(4000ms);
    SharedMutex reader(*session, path, curator_names());

    // A zklock `__READ__` reader, then a Curator reader beside it.
    reader.lock_shared();
    const auto node = std::filesystem::path(reader.reader().node_path()).filename().string();
    EXPECT_NE(node.find("-__READ__"), std::string::npos) << node;
    curator->read("r");
    ASSERT_TRUE(curator->wait_for("acquired", "r")) << "Curator's reader did not share with zklock's reader";
    // A Curator writer behind both: it waits for its reader, then for zklock's.
    curator->write("w");
    ASSERT_TRUE(wait_until([&] { return curator->printed("watching", "peer"); }, 60s)) << curator->output();
    curator->release("r");
    ASSERT_TRUE(curator->wait_for("released", "r"));
    const auto decided = [&] {
        return curator->lines("watching", "peer").size() >= 2 || curator->printed("acquired", "w");
    };
    ASSERT_TRUE(wait_until(decided, 60s)) << curator->output();
    EXPECT_FALSE(curator->printed("acquired", "w")) << "Curator's writer entered beside zklock's reader";
    EXPECT_EQ(curator->lines("watching", "peer").back(), names{node})
        << "Curator's writer does not wait for zklock's reader";
    EXPECT_TRUE(reader.reader().is_held());
    const auto zk_leave = monotonic_ns();
    reader.unlock_shared();
    const auto w_enter = curator->wait_for("acquired", "w");
    ASSERT_TRUE(w_enter);
    EXPECT_LT(zk_leave, *w_enter) << "Curator's writer entered while zklock's reader held";
    curator->release("w");
    ASSERT_TRUE(curator->wait_for("released", "w"));
    EXPECT_TRUE(curator->quit());
}

TEST_F(CuratorInteropTest, LeaderLatchWaitsForAZklockLeaderInCuratorsNames) {
    const auto path = lock_path();
    auto curator = peer(path);
    auto session = connect(4000ms);
    LeaderElectionOptions options;
    options.names = node_names::curator;
    LeaderElection election(*session, path, "zklock", options);

    const auto term = election.campaign();
    const auto node = std::filesystem::path(term.node).filename().string();
    EXPECT_NE(node.find("-latch-"), std::string::npos) << node;
    curator->latch("l");
    EXPECT_EQ(curator->wait_for_line("watching", "peer"), names{node})
        << "LeaderLatch does not wait for zklock's leader";
    EXPECT_FALSE(curator->printed("leader", "l")) << "LeaderLatch led beside zklock";
    EXPECT_TRUE(election.is_leader());
    const auto zk_leave = monotonic_ns();
    election.resign();
    const auto l_enter = curator->wait_for("leader", "l");
    ASSERT_TRUE(l_enter);
    EXPECT_LT(zk_leave, *l_enter) << "LeaderLatch led while zklock led";

    // And zklock, campaigning again, waits for the latch.
    const auto led = grant::make();
    election.async_campaign(on_grant(led));
    EXPECT_EQ(decided_position([&] { return election.queue_position(); }), 1u);
    EXPECT_TRUE(pending(led)) << "zklock led beside LeaderLatch";
    curator->release("l");
    const auto l_leave = curator->wait_for("releasing", "l");
    ASSERT_FALSE(get_within(led->result, 60s));
    ASSERT_TRUE(l_leave);
    EXPECT_LT(*l_leave, led->at.load()) << "zklock led while LeaderLatch led";
    election.resign();
    ASSERT_TRUE(curator->wait_for("released", "l"));
    EXPECT_TRUE(curator->quit());
}

} // namespace
} // namespace zklock::test
