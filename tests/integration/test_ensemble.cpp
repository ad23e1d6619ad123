#include "support.hpp"

#include <boost/asio/use_future.hpp>

using namespace zklock;
using namespace zklock::test;

// The lock on a 3-node ensemble whose leader dies while the lock is held.
TEST(EnsembleLock, HolderKeepsTheLockAcrossLeaderFailoverAndHandsItOver) {
    zklock::testing::EnsembleOptions eo;
    eo.max_session_timeout_ms = 8000;
    zklock::testing::Ensemble ensemble(eo);
    SessionOptions so;
    so.connect = ensemble.connect_string();
    so.session_timeout = 8000ms;
    Session a(so), b(so), observer(so);
    a.connect();
    b.connect();
    observer.connect();
    const std::string path = "/zklock-tests/ensemble/lock";
    Mutex holder(a, path);
    Mutex waiter(b, path);
    std::atomic<int> losses{0};
    holder.on_lost([&](std::error_code) { ++losses; });
    holder.lock();
    const auto token = holder.fencing_token();
    auto granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }));

    const auto leader = ensemble.leader_index();
    ASSERT_TRUE(leader.has_value());
    ensemble.node(*leader).kill9();
    ASSERT_TRUE(ensemble.wait_for_quorum(30s));

    EXPECT_TRUE(holder.is_held());
    EXPECT_EQ(losses, 0);
    EXPECT_FALSE(waiter.is_held());
    auto released = holder.async_unlock(boost::asio::use_future);
    const auto release_ec = get_within(released, 20s);
    EXPECT_FALSE(release_ec) << release_ec.message() << " a=" << to_string(a.state()) << " b=" << to_string(b.state()) << " obs=" << to_string(observer.state());
    EXPECT_FALSE(get_within(granted, 20s));
    EXPECT_TRUE(waiter.is_held());
    EXPECT_GT(waiter.fencing_token(), token) << "tokens must keep increasing across a new leader";
    waiter.unlock();
    EXPECT_TRUE(wait_until([&] { return list_contenders(observer, path).empty(); }, 20s));
}
