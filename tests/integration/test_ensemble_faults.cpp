// Faults of a 3-node ensemble, observed from real sessions and locks: the
// leader killed, the leader partitioned from the followers, the follower a
// client is connected to paused.
#include "fault_support.hpp"
#include "support.hpp"

#include <zklock/testing/ensemble.hpp>

#include <boost/asio/use_future.hpp>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;

namespace {

class EnsembleFaultTest : public ::testing::Test {
protected:
    void SetUp() override {
        zt::EnsembleOptions o;
        o.tick_time_ms = 100;
        o.sync_limit = 10;  // a follower gives up on a silent leader after 1 s
        o.max_session_timeout_ms = 4000;
        // Election connections to a cut-off peer time out after 0.5 s, not 5 s.
        o.jvm_flags = {"-Dzookeeper.cnxTimeout=500"};
        ensemble_ = std::make_unique<zt::Ensemble>(o);
    }

    void TearDown() override {
        ensemble_.reset();
        expect_no_fault_leftovers();
    }

    SessionOptions options(const std::string& connect, std::chrono::milliseconds timeout = 4000ms) const {
        SessionOptions o;
        o.connect = connect;
        o.session_timeout = timeout;
        o.connect_timeout = 20s;
        return o;
    }

    std::optional<std::size_t> new_leader_other_than(std::size_t old) {
        const auto now = ensemble_->leader_index();
        return now && *now != old ? now : std::nullopt;
    }

    std::unique_ptr<zt::Ensemble> ensemble_;
};

}  // namespace

TEST_F(EnsembleFaultTest, KillLeaderElectsANewLeaderAndTheHolderKeepsItsLock) {
    Session holder_session(options(ensemble_->connect_string())), other(options(ensemble_->connect_string()));
    holder_session.connect();
    other.connect();
    const std::string path = "/zklock-tests/kill-leader/lock";
    Mutex holder(holder_session, path);
    holder.lock();

    const auto old = ensemble_->kill_leader();
    EXPECT_FALSE(ensemble_->node(old).running());
    EXPECT_TRUE(wait_until([&] { return new_leader_other_than(old).has_value(); }, 30s));

    // The holder's session survives on the new quorum: it still holds, and
    // hands the lock over through the new leader.
    Mutex waiter(other, path);
    auto granted = waiter.async_lock(boost::asio::use_future);
    EXPECT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }, 20s));
    EXPECT_TRUE(holder.is_held());
    auto released = holder.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released, 20s));
    EXPECT_FALSE(get_within(granted, 20s));
    EXPECT_TRUE(waiter.is_held());
    waiter.unlock();

    ensemble_->node(old).restart();
    EXPECT_TRUE(ensemble_->wait_for_quorum(30s));
}

TEST_F(EnsembleFaultTest, PartitionedLeaderIsReplacedByALeaderAmongTheFollowers) {
    ZKLOCK_REQUIRE_IPTABLES();
    Session s(options(ensemble_->connect_string()));
    s.connect();
    const std::string path = "/zklock-tests/partition-leader/lock";

    const auto old = ensemble_->partition_leader();
    EXPECT_EQ(ensemble_->partitioned(), std::vector<std::size_t>{old});
    EXPECT_EQ(zt::zklock_packet_rules(::getpid()).empty(), false);
    EXPECT_TRUE(wait_until([&] { return new_leader_other_than(old).has_value(); }, 30s))
        << "the followers elect a leader among themselves";
    // The cut-off node still answers clients on its port; it just no longer leads.
    EXPECT_EQ(ensemble_->node(old).four_letter_word("ruok", 2s), "imok");
    EXPECT_TRUE(wait_until([&] {
        try {
            return zt::server_mode(ensemble_->node(old).four_letter_word("srvr", 1s)) != "leader";
        } catch (const std::system_error&) {
            return false;
        }
    }, 30s));
    // The majority side serves: a client takes a lock through it.
    Mutex m(s, path);
    m.lock();
    EXPECT_TRUE(m.is_held());
    m.unlock();

    ensemble_->heal();
    EXPECT_TRUE(ensemble_->partitioned().empty());
    EXPECT_TRUE(zt::zklock_packet_rules(::getpid()).empty());
    EXPECT_TRUE(ensemble_->wait_for_quorum(30s)) << "the old leader rejoins";
}

TEST_F(EnsembleFaultTest, PausingTheFollowerAClientUsesMovesTheClientToAnotherServer) {
    const auto leader = ensemble_->leader_index();
    ASSERT_TRUE(leader.has_value());
    std::string followers;
    for (std::size_t i = 0; i < ensemble_->size(); ++i) {
        if (i == *leader) continue;
        followers += (followers.empty() ? "" : ",") + ensemble_->node(i).connect_string();
    }
    Session s(options(followers));
    s.connect();
    EventLog events(s);
    const auto id = s.session_id();
    const std::string path = "/zklock-tests/pause-follower/lock";
    Mutex holder(s, path);
    holder.lock();
    std::optional<std::size_t> serving;
    ASSERT_TRUE(wait_until([&] { return (serving = ensemble_->node_of_session(id)).has_value(); }));
    ASSERT_NE(*serving, *leader);

    ASSERT_TRUE(ensemble_->node(*serving).pause_for(1h));
    EXPECT_TRUE(events.wait_for(session_event::suspended));
    EXPECT_TRUE(events.wait_for(session_event::reconnected));
    std::optional<std::size_t> moved_to;
    EXPECT_TRUE(wait_until([&] { return (moved_to = ensemble_->node_of_session(id)).has_value(); }));
    EXPECT_NE(moved_to, serving);
    EXPECT_EQ(s.session_id(), id);
    EXPECT_TRUE(holder.is_held()) << "a move within the session timeout keeps the lock";
    holder.unlock();

    EXPECT_TRUE(ensemble_->node(*serving).resume());
    EXPECT_TRUE(ensemble_->wait_for_quorum(30s));
}
