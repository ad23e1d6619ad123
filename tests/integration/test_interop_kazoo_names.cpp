// zklock writing kazoo's names (node_names::kazoo) next to the real kazoo client
// without extra_lock_patterns: kazoo's Lock, ReadLock, WriteLock and Election
// then wait for zklock's nodes as for their own, and zklock waits for theirs.
//
// Each kazoo client reports the node it decided to wait for ("predecessor");
// holders are ordered by CLOCK_MONOTONIC stamps, never by durations.
#include "grant_support.hpp"
#include "kazoo_fixture.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/shared_mutex.hpp>

namespace zklock::test {
namespace {

MutexOptions kazoo_names() {
    MutexOptions o;
    o.names = node_names::kazoo;
    return o;
}

std::string name_of(const std::string& node_path) { return std::filesystem::path(node_path).filename().string(); }

TEST_F(KazooInteropTest, MutexInKazoosNamesAndKazooLocksWaitForEachOther) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto session = connect(4000ms);
    Mutex mutex(*session, path, kazoo_names());

    // kazoo holds; zklock queues behind it; a second kazoo client behind zklock.
    auto first = peer(path, "first", {});
    ASSERT_TRUE(first->wait_for("acquired"));
    const auto granted = grant::make();
    mutex.async_lock(on_grant(granted));
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (std::vector<std::string>{"kazoo", "kazoo"}));
    ASSERT_TRUE(wait_until([&] { return mutex.queue_position().has_value(); }, 60s));
    EXPECT_EQ(mutex.queue_position(), 1u) << "zklock does not queue behind kazoo's node";
    const auto node = name_of(mutex.node_path());
    EXPECT_NE(node.find("__lock__"), std::string::npos) << node;
    auto last = peer(path, "last", {});
    EXPECT_EQ(last->wait_for_value("predecessor"), node) << "kazoo's Lock does not wait for zklock's node";

    first->release();
    ASSERT_FALSE(get_within(granted->result, 60s));
    EXPECT_TRUE(last->values("acquired").empty()) << "kazoo acquired beside zklock";
    const auto zk_leave = monotonic_ns();
    mutex.unlock();
    const auto last_acquired = last->wait_for("acquired");
    last->release();
    ASSERT_TRUE(first->exited_cleanly());
    ASSERT_TRUE(last->exited_cleanly());
    EXPECT_LT(first->sections().at(0).leave, granted->at.load()) << "zklock acquired while kazoo held the lock";
    ASSERT_TRUE(last_acquired);
    EXPECT_LT(zk_leave, *last_acquired) << "kazoo acquired while zklock held the lock";
}

// kazoo 2.8's ReadLock can wait for a writer queued behind it (kazoo#649), so
// the kazoo reader is queued before any writer.
TEST_F(KazooInteropTest, SharedMutexInKazoosNamesAndKazooReadWriteLocksWaitForEachOther) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto s1 = connect(4000ms);
    auto s2 = connect(4000ms);
    SharedMutex zk_reader(*s1, path, kazoo_names());
    SharedMutex zk_writer(*s2, path, kazoo_names());

    // Readers share: a kazoo ReadLock, then a zklock reader (`__rlock__`).
    auto kazoo_reader = peer(path, "reader", {"--recipe", "read"});
    ASSERT_TRUE(kazoo_reader->wait_for("acquired"));
    ASSERT_TRUE(zk_reader.try_lock_shared_for(60s)) << "a zklock reader did not share with a kazoo reader";
    EXPECT_NE(name_of(zk_reader.reader().node_path()).find("__rlock__"), std::string::npos);

    // A zklock writer (`__lock__`) waits for both readers; a kazoo WriteLock waits for it.
    const auto writer_granted = grant::make();
    zk_writer.writer().async_lock(on_grant(writer_granted));
    EXPECT_EQ(wait_for_queue(*observer, path, 3), (std::vector<std::string>(3, "kazoo")));
    ASSERT_TRUE(wait_until([&] { return zk_writer.writer().queue_position().has_value(); }, 60s));
    EXPECT_EQ(zk_writer.writer().queue_position(), 2u);
    auto kazoo_writer = peer(path, "writer", {"--recipe", "write"});
    EXPECT_EQ(kazoo_writer->wait_for_value("predecessor"), name_of(zk_writer.writer().node_path()))
        << "kazoo's WriteLock does not wait for zklock's writer";

    const auto readers_leave = monotonic_ns();
    zk_reader.unlock_shared();
    kazoo_reader->release();
    ASSERT_FALSE(get_within(writer_granted->result, 60s));
    EXPECT_TRUE(kazoo_writer->values("acquired").empty()) << "kazoo's writer acquired beside zklock's";
    const auto writer_leave = monotonic_ns();
    zk_writer.unlock();
    const auto kazoo_writer_acquired = kazoo_writer->wait_for("acquired");
    kazoo_writer->release();
    ASSERT_TRUE(kazoo_reader->exited_cleanly());
    ASSERT_TRUE(kazoo_writer->exited_cleanly());
    EXPECT_LT(std::max(readers_leave, kazoo_reader->sections().at(0).leave), writer_granted->at.load())
        << "zklock's writer acquired while readers held";
    ASSERT_TRUE(kazoo_writer_acquired);
    EXPECT_LT(writer_leave, *kazoo_writer_acquired) << "kazoo's writer acquired while zklock's writer held";
}

// kazoo's Election runs a Lock and takes no extra_lock_patterns: with kazoo's
// names it waits for a zklock leader (the other way: ElectionDefersToAKazooLeader).
TEST_F(KazooInteropTest, KazooElectionWaitsForAZklockLeaderInKazoosNames) {
    const auto path = lock_path();
    auto session = connect(4000ms);
    LeaderElectionOptions options;
    options.names = node_names::kazoo;
    LeaderElection election(*session, path, "zklock-leader", options);
    const auto term = election.campaign();

    auto kazoo = peer(path, "kazoo-candidate", {"--recipe", "election"});
    EXPECT_EQ(kazoo->wait_for_value("predecessor"), name_of(term.node)) << "kazoo's Election does not wait for zklock";
    EXPECT_TRUE(kazoo->values("acquired").empty()) << "kazoo led beside zklock";
    EXPECT_TRUE(election.is_leader());
    const auto zk_leave = monotonic_ns();
    election.resign();
    const auto kazoo_led = kazoo->wait_for("acquired");
    kazoo->release();
    ASSERT_TRUE(kazoo->exited_cleanly());
    ASSERT_TRUE(kazoo_led);
    EXPECT_LT(zk_leave, *kazoo_led) << "kazoo led while zklock led";
}

} // namespace
} // namespace zklock::test
