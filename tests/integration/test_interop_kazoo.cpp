// zklock and the real kazoo client (python3-kazoo, started as /usr/bin/python3
// processes running tests/interop/kazoo_peer.py) on one lock path: mutual
// exclusion under churn, FIFO across kinds, read-write across kinds, an election
// behind a kazoo leader, a kazoo holder asked to let go (it has no revocation),
// and `zklock status` on a mixed queue.
//
// Every client stamps its critical sections with CLOCK_MONOTONIC (one clock for
// every process on this machine): a section runs from the moment the acquire
// returned to the moment the release was asked for, so two correct holders'
// sections never overlap, and the checks compare stamps, never durations.
#include "foreign_semaphore.hpp"
#include "grant_support.hpp"
#include "kazoo_fixture.hpp"
#include "support.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/mutex.hpp>
#include <zklock/revocation.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/testing/faults.hpp>

#ifdef ZKLOCK_CLI_PATH
#include "test_cli_support.hpp"

#include <nlohmann/json.hpp>
#endif

#include <algorithm>
#include <functional>
#include <thread>

namespace zklock::test {
namespace {

TEST_F(KazooInteropTest, MutualExclusionUnderChurnWithKazooLocks) {
    const auto path = lock_path();
    constexpr int rounds = 25;
    // Two kazoo Lock clients and two zklock Mutex clients take turns on one path.
    std::vector<std::unique_ptr<KazooPeer>> kazoo;
    for (const auto* name : {"k1", "k2"})
        kazoo.push_back(peer(path, name,
                             plus({"--mode", "churn", "--wait-for-go", "--iterations", std::to_string(rounds)},
                                  kazoo_sees_zklock_mutex)));
    std::vector<std::unique_ptr<Session>> sessions;
    for (int c = 0; c < 2; ++c) sessions.push_back(connect(4000ms));
    expect_churn_with_peers(kazoo, sessions, path, rounds, "kazoo");
}

TEST_F(KazooInteropTest, FifoAcrossKinds) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto first = peer(path, "first", kazoo_sees_zklock_mutex);
    ASSERT_TRUE(first->wait_for("acquired"));

    const auto granted = grant::make();
    auto session = connect(4000ms);
    Mutex waiter(*session, path);
    waiter.async_lock(on_grant(granted));
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (std::vector<std::string>{"kazoo", "zklock"}));

    auto last = peer(path, "last", kazoo_sees_zklock_mutex);
    EXPECT_EQ(wait_for_queue(*observer, path, 3), (std::vector<std::string>{"kazoo", "zklock", "kazoo"}));
    // The last kazoo client waits for the zklock node just ahead of it (not for first).
    EXPECT_EQ(last->wait_for_value("predecessor"), std::filesystem::path(waiter.node_path()).filename().string())
        << "the last kazoo client does not queue behind zklock's node";

    first->release();
    ASSERT_FALSE(get_within(granted->result, 60s));
    const auto zk_leave = monotonic_ns();
    waiter.unlock();
    const auto last_acquired = last->wait_for("acquired");
    last->release();
    ASSERT_TRUE(first->exited_cleanly());
    ASSERT_TRUE(last->exited_cleanly());

    // first (kazoo), then the zklock waiter, then last (kazoo): each only after the one before let go.
    const auto first_leave = first->sections().at(0).leave;
    EXPECT_LT(first_leave, granted->at.load()) << "zklock acquired while the first kazoo client held the lock";
    ASSERT_TRUE(last_acquired);
    EXPECT_LT(zk_leave, *last_acquired) << "the last kazoo client acquired while zklock held the lock";
}

// kazoo has no revocation: a holder asked to let go (zklock's request, as
// Curator's Revoker writes it) ignores the data change and keeps the lock, and
// the zklock waiter behind it, told of that change, does not take it for a
// release mark.
TEST_F(KazooInteropTest, AKazooHolderAskedToLetGoKeepsTheLockAndTheZklockWaiterBehindItWaits) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto holder = peer(path, "holder", kazoo_sees_zklock_mutex);
    ASSERT_TRUE(holder->wait_for("acquired"));
    const auto queue = wait_for_contenders(*observer, path, 1, 60s);
    ASSERT_EQ(queue.size(), 1u);
    const auto node = path + "/" + queue.front().node;

    auto session = connect(4000ms);
    Mutex waiter(*session, path);
    const auto granted = grant::make();
    waiter.async_lock(on_grant(granted));
    EXPECT_EQ(decided_position([&] { return waiter.queue_position(); }), 1u);
    // Its watch is set before the request is written: a request written first
    // would be read with the watch and wake nobody.
    wait_for_watcher(*session, node);
    request_revocation(*observer, node);
    // The change fired its watch (the server does so before it answers the
    // write); the waiter looked again, which set the watch anew (its read,
    // then this listing on its session, answered in order), and still waits.
    wait_for_watcher(*session, node);
    const auto now = list_contenders(*session, path);
    ASSERT_EQ(now.size(), 2u);
    EXPECT_EQ(now.front().data, "__REVOKE__");
    EXPECT_TRUE(pending(granted)) << "zklock took the revocation request for a release and holds beside kazoo";
    EXPECT_TRUE(holder->values("releasing").empty()) << holder->output();
    holder->release();
    ASSERT_FALSE(get_within(granted->result, 60s));
    ASSERT_TRUE(holder->exited_cleanly());
    EXPECT_LT(holder->sections().at(0).leave, granted->at.load()) << "zklock acquired while kazoo held the lock";
    waiter.unlock();
}

TEST_F(KazooInteropTest, ReadersShareAndWritersExcludeAcrossKinds) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto s1 = connect(4000ms);
    auto s2 = connect(4000ms);
    auto s3 = connect(4000ms);
    auto s4 = connect(4000ms);
    const auto writer_granted = grant::make();
    const auto reader3_granted = grant::make();
    SharedMutex zk_reader1(*s1, path);
    SharedMutex zk_reader2(*s2, path);
    SharedMutex zk_writer(*s3, path);
    SharedMutex zk_reader3(*s4, path);

    // Readers share: a zklock reader, then a kazoo ReadLock, then a zklock reader
    // that can only get in if it reads kazoo's __rlock__ node as a reader.
    zk_reader1.lock_shared();
    auto kazoo_reader = peer(path, "reader", plus({"--recipe", "read"}, kazoo_reader_sees_zklock));
    ASSERT_TRUE(kazoo_reader->wait_for("acquired"));
    ASSERT_TRUE(zk_reader2.try_lock_shared_for(60s)) << "a zklock reader did not share with a kazoo reader";
    EXPECT_EQ(wait_for_queue(*observer, path, 3), (std::vector<std::string>{"zklock", "kazoo", "zklock"}));

    // Writers exclude: a kazoo WriteLock queues behind the three readers, a zklock
    // writer behind it, a zklock reader behind that.
    auto kazoo_writer = peer(path, "writer", plus({"--recipe", "write"}, kazoo_writer_sees_zklock));
    wait_for_queue(*observer, path, 4);
    zk_writer.writer().async_lock(on_grant(writer_granted));
    wait_for_queue(*observer, path, 5);
    zk_reader3.reader().async_lock(on_grant(reader3_granted));
    EXPECT_EQ(wait_for_queue(*observer, path, 6),
              (std::vector<std::string>{"zklock", "kazoo", "zklock", "kazoo", "zklock", "zklock"}));

    const auto readers_leave = monotonic_ns();
    zk_reader1.unlock_shared();
    zk_reader2.unlock_shared();
    kazoo_reader->release();
    const auto kazoo_writer_acquired = kazoo_writer->wait_for("acquired");
    ASSERT_TRUE(kazoo_writer_acquired);
    kazoo_writer->release();
    ASSERT_FALSE(get_within(writer_granted->result, 60s));
    const auto writer_leave = monotonic_ns();
    zk_writer.unlock();
    ASSERT_FALSE(get_within(reader3_granted->result, 60s));
    zk_reader3.unlock_shared();
    ASSERT_TRUE(kazoo_reader->exited_cleanly());
    ASSERT_TRUE(kazoo_writer->exited_cleanly());

    const auto kazoo_reader_leave = kazoo_reader->sections().at(0).leave;
    const auto kazoo_writer_leave = kazoo_writer->sections().at(0).leave;
    EXPECT_LT(std::max(readers_leave, kazoo_reader_leave), *kazoo_writer_acquired)
        << "the kazoo writer acquired while readers held the lock";
    EXPECT_LT(kazoo_writer_leave, writer_granted->at.load())
        << "the zklock writer acquired while the kazoo writer held";
    EXPECT_LT(writer_leave, reader3_granted->at.load()) << "a zklock reader acquired while the zklock writer held";
}

TEST_F(KazooInteropTest, ElectionDefersToAKazooLeader) {
    const auto path = lock_path();
    const auto led = grant::make();
    auto observer = connect(4000ms);
    auto kazoo = peer(path, "kazoo-leader", {"--recipe", "election"});
    ASSERT_TRUE(kazoo->wait_for("acquired"));

    auto session = connect(4000ms);
    LeaderElection election(*session, path, "zklock-candidate");
    election.async_campaign(on_grant(led));
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (std::vector<std::string>{"kazoo", "zklock"}));
    const auto info = election.leader();
    ASSERT_TRUE(info);
    EXPECT_EQ(info->participant_id, "kazoo-leader");  // kazoo's identifier is its node's data

    kazoo->release();
    ASSERT_FALSE(get_within(led->result, 60s));
    EXPECT_TRUE(election.is_leader());
    ASSERT_TRUE(kazoo->exited_cleanly());
    EXPECT_LT(kazoo->sections().at(0).leave, led->at.load()) << "zklock led while the kazoo leader led";
    election.resign();
}

// The one-way cells of docs/interop.md: kazoo recipes without
// extra_lock_patterns (kazoo's Election takes none) count only their own
// `__lock__`/`__rlock__` names, so one that joins behind a zklock holder in
// zklock's default names holds beside it. Each test shows the overlap with the
// real client; node_names::kazoo is the cure (test_interop_kazoo_names.cpp).
class KazooOneWayTest : public KazooInteropTest {
protected:
    /// `zk_holds` holds from before `kazoo` starts until after it acquired:
    /// kazoo's predecessor is nobody and its hold began while zklock's did.
    void expect_kazoo_holds_beside_zklock(KazooPeer& kazoo, std::int64_t zk_enter, const std::function<void()>& zk_leave) {
        EXPECT_EQ(kazoo.wait_for_value("predecessor"), "-") << "kazoo counted zklock's node";
        const auto kazoo_enter = kazoo.wait_for("acquired");
        const auto leave = monotonic_ns();
        zk_leave();
        ASSERT_TRUE(kazoo_enter);
        EXPECT_LT(zk_enter, *kazoo_enter);
        EXPECT_LT(*kazoo_enter, leave) << "kazoo did not hold beside zklock";
        kazoo.release();
        ASSERT_TRUE(kazoo.exited_cleanly());
    }
};

TEST_F(KazooOneWayTest, AKazooLockWithoutPatternsHoldsBesideAZklockMutex) {
    const auto path = lock_path();
    auto session = connect(4000ms);
    Mutex holder(*session, path);
    holder.lock();
    const auto enter = monotonic_ns();
    auto kazoo = peer(path, "k", {});
    expect_kazoo_holds_beside_zklock(*kazoo, enter, [&] { holder.unlock(); });
}

TEST_F(KazooOneWayTest, AKazooWriteLockWithoutPatternsHoldsBesideAZklockWriter) {
    const auto path = lock_path();
    auto session = connect(4000ms);
    SharedMutex writer(*session, path);
    writer.lock();
    const auto enter = monotonic_ns();
    auto kazoo = peer(path, "kw", {"--recipe", "write"});
    expect_kazoo_holds_beside_zklock(*kazoo, enter, [&] { writer.unlock(); });
}

TEST_F(KazooOneWayTest, AKazooElectionLeadsBesideAZklockLeader) {
    const auto path = lock_path();
    auto session = connect(4000ms);
    LeaderElection election(*session, path, "zklock-leader");
    const auto term = election.campaign();
    const auto enter = monotonic_ns();
    auto kazoo = peer(path, "ke", {"--recipe", "election"});
    expect_kazoo_holds_beside_zklock(*kazoo, enter, [&] { election.resign(); });
}

// A kazoo Semaphore keeps its own layout under the path (a lease node per
// holder, the lease count as the path's data): zklock's Semaphore would admit
// its own permits beside it, so it refuses the path, leaving nothing behind.
TEST_F(KazooInteropTest, SemaphoreRefusesAKazooSemaphoresPath) {
    const auto path = lock_path();
    auto kazoo = peer(path, "kazoo-lease", {"--recipe", "semaphore", "--max-leases", "2"});
    ASSERT_TRUE(kazoo->wait_for("acquired"));

    auto session = connect(4000ms);
    // The kazoo lease is the only child.
    const auto listing = expect_refused_beside_a_peer_semaphore(*session, path, "kazoo Semaphore");
    ASSERT_EQ(listing.foreign.size(), 1u);
    EXPECT_EQ(listing.foreign.front().size(), 32u) << listing.foreign.front();
    kazoo->release();
    ASSERT_TRUE(kazoo->exited_cleanly());
}

#ifdef ZKLOCK_CLI_PATH
TEST_F(KazooInteropTest, StatusShowsEachContendersDialectAndTheForeignChildren) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto s1 = connect(4000ms);
    Mutex holder(*s1, path);
    holder.lock();
    auto kazoo = peer(path, "queued", kazoo_sees_zklock_mutex);
    ASSERT_TRUE(kazoo->wait_for_value("predecessor"));
    // Nodes the C recipe and Curator's LeaderLatch would make (forged with fixed
    // sequences past the server's), and a child no dialect recognises.
    testing::create_node(*observer, path + "/x-0000018bcd12ef34-0000000100", "", true);
    testing::create_node(*observer, path + "/_c_4f1c2b7e-9a3d-4e5f-8a6b-0c1d2e3f4a5b-latch-0000000101", "", true);
    testing::create_node(*observer, path + "/config", "", true);

    cli::Cli cli;
    auto text = cli.start({"status", "-c", server_->connect_string(), path}, "text");
    EXPECT_EQ(cli::exit_code(text), 0);
    const auto out = cli.output("text");
    EXPECT_NE(out.find("4 contenders"), std::string::npos) << out;
    EXPECT_NE(out.find("DIALECT"), std::string::npos) << out;
    EXPECT_NE(out.find("mixed dialects: c-recipe, curator, kazoo, zklock"), std::string::npos) << out;
    EXPECT_NE(out.find("foreign children (no dialect recognises them; not in the queue): config"), std::string::npos)
        << out;

    auto json = cli.start({"status", "-c", server_->connect_string(), "--json", path}, "json");
    EXPECT_EQ(cli::exit_code(json), 0);
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(cli.output("json"))) << cli.output("json");
    const auto& queue = doc.at("contenders");
    ASSERT_EQ(queue.size(), 4u) << doc.dump();
    std::vector<std::string> dialects, kinds;
    for (const auto& c : queue) {
        dialects.push_back(c.at("dialect"));
        kinds.push_back(c.at("kind"));
        EXPECT_TRUE(c.contains("fencing_token") && c.contains("owner_session")) << c.dump();  // the fields of before
    }
    EXPECT_EQ(dialects, (std::vector<std::string>{"zklock", "kazoo", "c-recipe", "curator"}));
    EXPECT_EQ(kinds, std::vector<std::string>(4, "exclusive"));
    EXPECT_EQ(queue[1].at("data"), "queued");  // kazoo's identifier
    EXPECT_EQ(doc.at("dialects"), (std::vector<std::string>{"c-recipe", "curator", "kazoo", "zklock"}));
    EXPECT_EQ(doc.at("mixed_dialects"), true);
    EXPECT_EQ(doc.at("foreign"), std::vector<std::string>{"config"});

    holder.unlock();
    ASSERT_TRUE(kazoo->wait_for("acquired"));
    kazoo->release();
    ASSERT_TRUE(kazoo->exited_cleanly());
}
#endif

} // namespace
} // namespace zklock::test
