// Chaos on a 3-node ensemble: six clients loop on one lock (a Mutex, then a
// LeaderElection) while the leader is killed and restarted, holders are
// frozen past their session timeout, sessions expire and the leader is cut off.
// Pass conditions: see chaos_support.hpp and lab/chaos/chaos.hpp.
#include "chaos_support.hpp"

#include <zklock/testing/packet_filter.hpp>

using namespace zklock;
using namespace zklock::test;

TEST_F(ChaosTest, LeaderKilledAndRestartedRepeatedlyWhileSixClientsLoopOnOneMutex) {
    zt::ChaosOptions o;
    o.nodes = 3;
    o.clients = 6;
    o.links = false;  // server faults only
    o.session_timeout = 2000ms;
    o.client.path = "/zklock-chaos/leader-kills";
    auto& cluster = make_cluster(o);
    cluster.start();

    zt::chaos_schedule_options schedule;
    schedule.faults = {zt::chaos_fault::kill_leader};
    schedule.min_duration = 200ms;  // the leader stays dead this long before its restart
    schedule.max_duration = 1500ms;
    schedule.min_quiet = 300ms;
    schedule.max_quiet = 800ms;
    for (int round = 0; round < 3; ++round) {
        const auto before = cluster.ledger().summary().grants;
        cluster.apply(zt::next_chaos_step(cluster.rng(), schedule));
        // The clients get through each failover: grants go on once the new leader serves.
        EXPECT_TRUE(wait_until([&] { return cluster.ledger().summary().grants > before; }, 30s)) << "round " << round;
    }
    const auto outcome = finish_and_judge();
    EXPECT_EQ(outcome.faults, 3u);
}

TEST_F(ChaosTest, LeaderElectionUnderLeaderKillsFrozenLeadersExpiryAndPartitions) {
    zt::ChaosOptions o;
    o.nodes = 3;
    o.clients = 6;
    o.links = false;
    o.session_timeout = 1500ms;
    o.client.recipe = zt::chaos_recipe::leader_election;
    o.client.path = "/zklock-chaos/election";
    auto& cluster = make_cluster(o);
    cluster.start();

    // Each fault once, in an order drawn from the seed: a frozen leader (its
    // late write with the old epoch must be refused), a leader's session
    // expired, the ZooKeeper leader killed, and cut off when iptables allows.
    std::vector<zt::chaos_step> steps = {
        {zt::chaos_fault::freeze_holder, 0, 6000ms, 300ms},
        {zt::chaos_fault::expire_session, 0, 0ms, 300ms},
        {zt::chaos_fault::kill_leader, 0, 800ms, 300ms},
    };
    if (!zt::PacketFilter::unavailable()) steps.push_back({zt::chaos_fault::partition_leader, 0, 2500ms, 300ms});
    else std::cout << "[ chaos    ]   partition_leader left out: " << *zt::PacketFilter::unavailable() << std::endl;
    for (std::size_t i = steps.size(); i > 1; --i) std::swap(steps[i - 1], steps[cluster.rng()() % i]);
    for (auto& s : steps) {
        s.target = cluster.rng()() % o.clients;
        // Aim the session expiry at the current leader when there is one.
        if (s.fault == zt::chaos_fault::expire_session)
            for (std::size_t c = 0; c < cluster.clients(); ++c)
                if (cluster.client(c).in_section()) s.target = c;
        const auto refused = cluster.ledger().summary().refused;
        const auto what = cluster.apply(s);
        if (s.fault == zt::chaos_fault::freeze_holder && what.find("until another client wrote") != std::string::npos) {
            EXPECT_GT(cluster.ledger().summary().refused, refused)
                << "the frozen leader's late write with its old epoch must be refused: " << what;
        }
    }
    const auto outcome = finish_and_judge();
    // Never two leaders with one epoch, never an older epoch accepted after a newer one.
    EXPECT_EQ(outcome.summary.duplicate_tokens, 0u);
    EXPECT_EQ(outcome.summary.out_of_order_accepts, 0u);
    EXPECT_EQ(outcome.summary.interleaved_accepts, 0u);
}
