// zklock and the real go-zookeeper client (Debian's
// golang-github-samuel-go-zookeeper-dev: zk.Lock, run by the harness
// tests/interop/go_peer.go as a process) on one lock path: mutual exclusion under
// churn and FIFO across kinds. zk.Lock names its nodes `_c_<32 hex>-lock-<seq>`
// and orders every child by the number after its last '-', so it queues behind
// zklock's default names, and zklock reads its names as the go-zookeeper dialect.
#include "go_peer.hpp"
#include "grant_support.hpp"
#include "sections.hpp"
#include "support.hpp"

#include <zklock/testing/process.hpp>

#include <filesystem>
#include <memory>

namespace zklock::test {
namespace {

class GoInteropTest : public ServerTest {
protected:
    void SetUp() override {
        if (const auto why = go_peer_unavailable()) GTEST_SKIP() << "go-zookeeper interop: " << *why;
        ServerTest::SetUp();
    }

    std::unique_ptr<GoPeer> peer(const std::string& path, const std::string& name, std::vector<std::string> args = {}) {
        return std::make_unique<GoPeer>(dir_.path(), server_->connect_string(), path, name, std::move(args));
    }

    /// Waits until the queue at `path` holds `n` contenders; returns their dialects in order.
    std::vector<std::string> wait_for_queue(Session& s, const std::string& path, std::size_t n) {
        std::vector<std::string> out;
        for (const auto& c : wait_for_contenders(s, path, n, 60s)) out.push_back(c.dialect);
        return out;
    }

    testing::TempDir dir_{"zklock-go-"};
};

TEST_F(GoInteropTest, MutualExclusionUnderChurnWithGoLocks) {
    const auto path = lock_path();
    constexpr int rounds = 25;
    // Two go-zookeeper clients and two zklock Mutex clients take turns on one path.
    std::vector<std::unique_ptr<GoPeer>> go;
    for (const auto* name : {"g1", "g2"})
        go.push_back(peer(path, name, {"--mode", "churn", "--wait-for-go", "--iterations", std::to_string(rounds)}));
    std::vector<std::unique_ptr<Session>> sessions;
    for (int c = 0; c < 2; ++c) sessions.push_back(connect(4000ms));
    expect_churn_with_peers(go, sessions, path, rounds, "go");
}

TEST_F(GoInteropTest, FifoAcrossKinds) {
    const auto path = lock_path();
    auto observer = connect(4000ms);
    auto first = peer(path, "first");
    ASSERT_TRUE(first->wait_for("acquired"));

    // zklock queues behind the Go holder: it counts the go-zookeeper node.
    const auto granted = grant::make();
    auto session = connect(4000ms);
    Mutex waiter(*session, path);
    waiter.async_lock(on_grant(granted));
    EXPECT_EQ(wait_for_queue(*observer, path, 2), (std::vector<std::string>{"go-zookeeper", "zklock"}));
    EXPECT_EQ(decided_position([&] { return waiter.queue_position(); }), 1u)
        << "zklock does not count go-zookeeper's node";

    auto last = peer(path, "last");
    EXPECT_EQ(wait_for_queue(*observer, path, 3), (std::vector<std::string>{"go-zookeeper", "zklock", "go-zookeeper"}));
    EXPECT_TRUE(pending(granted)) << "zklock acquired beside the Go holder";

    // first (Go), then the zklock waiter, then last (Go): each only after the one before let go.
    first->release();
    ASSERT_FALSE(get_within(granted->result, 60s));
    const auto first_leave = first->sections().at(0).leave;
    EXPECT_LT(first_leave, granted->at.load()) << "zklock acquired while the first Go client held the lock";
    EXPECT_TRUE(last->values("acquired").empty()) << "the last Go client acquired beside zklock";
    const auto zk_leave = monotonic_ns();
    waiter.unlock();
    const auto last_acquired = last->wait_for("acquired");
    last->release();
    ASSERT_TRUE(first->exited_cleanly());
    ASSERT_TRUE(last->exited_cleanly());
    ASSERT_TRUE(last_acquired);
    EXPECT_LT(zk_leave, *last_acquired) << "the last Go client acquired while zklock held the lock";
}

} // namespace
} // namespace zklock::test
