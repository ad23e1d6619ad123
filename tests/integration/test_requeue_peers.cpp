// QueueLock::requeue() beside the real Apache Curator (InterProcessMutex,
// tests/interop/CuratorPeer.java) and go-zookeeper (zk.Lock,
// tests/interop/go_peer.go) clients, as test_requeue.cpp has it beside kazoo:
// a requeueing zklock worker never overtakes a peer queued while it holds (the
// peer sees an ordinary release and holds first), and a worker granted after a
// peer's hold hands the lock on to the next peer before its own next turn.
// Holders are ordered by CLOCK_MONOTONIC stamps (grant_support.hpp).
#include "curator_fixture.hpp"
#include "go_peer.hpp"
#include "grant_support.hpp"
#include "support.hpp"

#include <zklock/mutex.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace zklock::test {
namespace {

using names = std::vector<std::string>;

class CuratorRequeueTest : public CuratorInteropTest {};

TEST_F(CuratorRequeueTest, AWorkerNeverOvertakesInterProcessMutexesAndHandsOnToThem) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto curator = peer(path);
    auto session = connect(4000ms);
    const std::map<std::int64_t, std::string> who{{session->session_id(), "zklock"}};
    Mutex worker(*session, path);

    // Queued while the worker holds: the requeue grants Curator first.
    worker.lock();
    curator->mutex("c1");
    EXPECT_EQ(wait_for_queue(*observer, path, 2, who), (names{"zklock", "curator"}));
    const auto turn = grant::make();
    const auto worker_leave = monotonic_ns();
    worker.async_requeue(on_grant(turn));
    const auto c1_enter = curator->wait_for("acquired", "c1");
    ASSERT_TRUE(c1_enter) << curator->output();
    EXPECT_LT(worker_leave, *c1_enter);
    EXPECT_EQ(wait_for_queue(*observer, path, 2, who), (names{"curator", "zklock"}))
        << "the requeued node is not behind Curator's";
    EXPECT_TRUE(pending(turn)) << "the worker's next turn came while Curator held the lock";
    EXPECT_FALSE(worker.is_held());
    curator->release("c1");
    const auto c1_leave = curator->wait_for("releasing", "c1");
    ASSERT_FALSE(get_within(turn->result, 60s));
    ASSERT_TRUE(c1_leave);
    EXPECT_LT(*c1_leave, turn->at.load()) << "the worker's next turn came while Curator held the lock";
    EXPECT_TRUE(worker.is_held());

    // The other way: granted after Curator's hold above, the worker requeues
    // behind the next InterProcessMutex, queued while it holds.
    curator->mutex("c2");
    EXPECT_EQ(wait_for_queue(*observer, path, 2, who), (names{"zklock", "curator"}));
    ASSERT_TRUE(curator->wait_for_line("predecessor", "c2"));
    const auto next = grant::make();
    worker.async_requeue(on_grant(next));
    ASSERT_TRUE(curator->wait_for("acquired", "c2")) << curator->output();
    EXPECT_TRUE(pending(next));
    curator->release("c2");
    const auto c2_leave = curator->wait_for("releasing", "c2");
    ASSERT_FALSE(get_within(next->result, 60s));
    ASSERT_TRUE(c2_leave);
    EXPECT_LT(*c2_leave, next->at.load()) << "the worker's next turn came while Curator held the lock";
    worker.unlock();
    EXPECT_TRUE(curator->quit());
}

class GoRequeueTest : public ServerTest {
protected:
    void SetUp() override {
        if (const auto why = go_peer_unavailable()) GTEST_SKIP() << "go-zookeeper interop: " << *why;
        ServerTest::SetUp();
    }

    std::unique_ptr<GoPeer> peer(const std::string& path, const std::string& name) {
        return std::make_unique<GoPeer>(dir_.path(), server_->connect_string(), path, name, std::vector<std::string>{});
    }

    /// Waits until the queue at `path` holds `n` contenders; returns their dialects in order.
    std::vector<std::string> wait_for_queue(Session& s, const std::string& path, std::size_t n) {
        std::vector<std::string> out;
        for (const auto& c : wait_for_contenders(s, path, n, 60s)) out.push_back(c.dialect);
        return out;
    }

    testing::TempDir dir_{"zklock-go-requeue-"};
};

TEST_F(GoRequeueTest, AWorkerNeverOvertakesGoLocksAndHandsOnToThem) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto session = connect(4000ms);
    Mutex worker(*session, path);

    // Queued while the worker holds: the requeue grants the Go client first.
    worker.lock();
    auto first = peer(path, "g1");
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (names{"zklock", "go-zookeeper"}));
    const auto turn = grant::make();
    const auto worker_leave = monotonic_ns();
    worker.async_requeue(on_grant(turn));
    const auto g1_enter = first->wait_for("acquired");
    ASSERT_TRUE(g1_enter) << first->output();
    EXPECT_LT(worker_leave, *g1_enter);
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (names{"go-zookeeper", "zklock"}))
        << "the requeued node is not behind the Go client's";
    EXPECT_TRUE(pending(turn)) << "the worker's next turn came while the Go client held the lock";
    first->release();
    ASSERT_FALSE(get_within(turn->result, 60s));
    EXPECT_LT(first->sections().at(0).leave, turn->at.load())
        << "the worker's next turn came while the Go client held the lock";
    EXPECT_TRUE(first->exited_cleanly());

    // The other way: granted after the Go client's hold, the worker requeues
    // behind the next Go client, queued while it holds.
    auto second = peer(path, "g2");
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (names{"zklock", "go-zookeeper"}));
    const auto next = grant::make();
    worker.async_requeue(on_grant(next));
    ASSERT_TRUE(second->wait_for("acquired")) << second->output();
    EXPECT_TRUE(pending(next));
    second->release();
    ASSERT_FALSE(get_within(next->result, 60s));
    EXPECT_LT(second->sections().at(0).leave, next->at.load())
        << "the worker's next turn came while the Go client held the lock";
    EXPECT_TRUE(second->exited_cleanly());
    worker.unlock();
}

} // namespace
} // namespace zklock::test
