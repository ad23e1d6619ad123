// Network faults between a real zklock client and a real ZooKeeper server,
// through testing::FaultyLink: delay, blackhole (short and long), reset, and a
// lost reply. Each is observed from a Session and a Mutex.
#include "fault_support.hpp"
#include "support.hpp"

#include <zklock/error.hpp>
#include <zklock/leader_election.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/faulty_link.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <future>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;

namespace {

class NetworkFaultTest : public ServerTest {
protected:
    void TearDown() override {
        ServerTest::TearDown();
        expect_no_fault_leftovers();
    }

    // A session that talks to the server through `link`.
    std::unique_ptr<Session> connect_through(const zt::FaultyLink& link,
                                             std::chrono::milliseconds session_timeout = 2000ms) {
        auto o = options(session_timeout);
        o.connect = link.connect_string();
        auto s = std::make_unique<Session>(o);
        s->connect();
        return s;
    }
};

}  // namespace

TEST_F(NetworkFaultTest, DelayedLinkStillCompletesRequestsEachRoundTripTwiceTheDelayLate) {
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link);
    constexpr auto latency = 600ms;
    link.delay(latency);
    EXPECT_EQ(link.delay(), latency);
    // One request, one reply: each waits `latency` in the link (a lower bound
    // by construction, not a guess about this machine's speed).
    const auto start = std::chrono::steady_clock::now();
    zt::create_node(*s, "/zklock-tests-delayed");
    EXPECT_GE(std::chrono::steady_clock::now() - start, 2 * latency);
    // A whole acquire and release, several round trips, on a slow link.
    link.delay(50ms);
    Mutex m(*s, lock_path());
    ASSERT_TRUE(m.try_lock_for(20s));
    EXPECT_TRUE(m.is_held());
    auto released = m.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
    zt::delete_node(*s, "/zklock-tests-delayed");
}

TEST_F(NetworkFaultTest, BlackholeLongerThanTheSessionTimeoutLosesTheLockAndTheServerExpiresTheSession) {
    ZKLOCK_REQUIRE_IPTABLES();
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    auto holder_session = connect_through(link, 2000ms);
    EventLog events(*holder_session);
    const auto cut_off_session = holder_session->session_id();
    Mutex holder(*holder_session, path);
    auto lost = first_loss(holder);
    holder.lock();
    auto other = connect();  // straight to the server
    Mutex waiter(*other, path);
    auto granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }));

    link.blackhole();
    EXPECT_TRUE(link.blackholed());
    EXPECT_TRUE(events.wait_for(session_event::suspended)) << "the client must notice the silence";
    const auto why = get_within(lost, 15s);
    EXPECT_TRUE(why == errc::connection_suspended || why == errc::session_expired) << why.message();
    EXPECT_FALSE(holder.is_held());
    // The server expired the cut-off session: its node is gone and the waiter
    // holds the lock while the holder is still cut off.
    EXPECT_FALSE(get_within(granted, 15s));
    EXPECT_TRUE(waiter.is_held());
    EXPECT_TRUE(link.blackholed());
    EXPECT_GT(link.blackholed_packets(), 0u);
    for (const auto& c : list_contenders(*other, path)) EXPECT_NE(c.owner_session, cut_off_session) << c.node;

    link.heal();
    EXPECT_FALSE(link.blackholed());
    EXPECT_TRUE(events.wait_for(session_event::expired)) << "back online, the client learns the session is gone";
    EXPECT_TRUE(wait_until([&] { return holder_session->state() == session_state::connected; }));
    EXPECT_NE(holder_session->session_id(), cut_off_session);
    waiter.unlock();
}

TEST_F(NetworkFaultTest, BlackholeShorterThanTheSessionTimeoutKeepsTheSessionAndTheLock) {
    ZKLOCK_REQUIRE_IPTABLES();
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 4000ms);
    EventLog events(*s);
    const auto id = s->session_id();
    Mutex holder(*s, path);
    holder.lock();

    link.blackhole();
    // Heal as soon as the kernel has dropped the client's traffic (a ping, at
    // most a third of the session timeout away): no sleeping.
    ASSERT_TRUE(wait_until([&] { return link.blackholed_packets() > 0; }, 10s));
    link.heal();

    // The connection carries requests again (TCP retransmits what was dropped).
    Mutex probe(*s, lock_path("probe"));
    ASSERT_TRUE(probe.try_lock_for(20s)) << "the healed link carries requests";
    probe.unlock();
    EXPECT_TRUE(holder.is_held());
    EXPECT_EQ(s->session_id(), id);
    EXPECT_EQ(events.count(session_event::expired), 0u);
    EXPECT_EQ(events.count(session_event::suspended_too_long), 0u);
    auto observer = connect();
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(queue[0].owner_session, id);
    holder.unlock();
}

TEST_F(NetworkFaultTest, ResetTearsTheConnectionDownAndTheClientReconnectsToTheSameSession) {
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 2000ms);
    EventLog events(*s);
    const auto id = s->session_id();
    Mutex holder(*s, lock_path());
    holder.lock();
    ASSERT_EQ(link.open_connections(), 1u);

    EXPECT_EQ(link.reset(), 1u);
    EXPECT_TRUE(events.wait_for(session_event::suspended));
    EXPECT_TRUE(events.wait_for(session_event::reconnected));
    EXPECT_EQ(s->session_id(), id);
    EXPECT_TRUE(holder.is_held());
    EXPECT_EQ(events.count(session_event::expired), 0u);
    EXPECT_EQ(link.accepted_connections(), 2u);
    holder.unlock();
}

TEST_F(NetworkFaultTest, DropNextReplyLetsTheRequestThroughAndLosesOnlyItsReply) {
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 2000ms);
    EventLog events(*s);
    auto observer = connect();
    const std::string node = "/zklock-tests-dropped-reply";
    link.drop_next_reply(node);
    EXPECT_TRUE(link.drop_armed());
    try {
        zt::create_node(*s, node);
        ADD_FAILURE() << "the create's reply reached the client";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::connection_loss) << e.what();
    }
    EXPECT_FALSE(link.drop_armed());
    EXPECT_EQ(link.replies_dropped(), 1u);
    EXPECT_TRUE(events.wait_for(session_event::reconnected));
    // The server did create it: creating it again says it exists.
    try {
        zt::create_node(*observer, node);
        ADD_FAILURE() << "the dropped create never reached the server";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::node_exists) << e.what();
    }
    zt::delete_node(*observer, node);
}

TEST_F(NetworkFaultTest, LostCreateReplyDuringAnAcquireLeavesExactlyOneNodeAndTheAcquireSucceeds) {
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 2000ms);
    EventLog events(*s);
    auto observer = connect();
    create_parents(*observer, path);
    zt::create_node(*observer, path);  // so the first create is the lock node's, not a parent's
    link.drop_next_reply(path + "/_c_");

    Mutex m(*s, path);
    // The create happened, its reply was lost: the guid finds the node again.
    // (A second node of ours would queue behind the first forever: hence the deadline.)
    ASSERT_TRUE(m.try_lock_for(20s));

    EXPECT_EQ(link.replies_dropped(), 1u);
    EXPECT_TRUE(events.wait_for(session_event::reconnected));
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u) << "a second node would block the queue forever";
    EXPECT_EQ(queue[0].owner_session, s->session_id());
    EXPECT_EQ(path + "/" + queue[0].node, m.node_path());
    EXPECT_TRUE(m.is_held());
    auto released = m.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
}

// The same in kazoo's naming (MutexOptions::names): the node's tag is 32 hex
// digits and no `_c_` precedes it, and the attempt still finds its node by it.
TEST_F(NetworkFaultTest, LostCreateReplyInKazoosNamesLeavesExactlyOneNodeAndTheAcquireSucceeds) {
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 2000ms);
    auto observer = connect();
    create_parents(*observer, path);
    zt::create_node(*observer, path);
    link.drop_next_reply(path + "/");  // the lock node's create: the first request under the path

    MutexOptions kazoo;
    kazoo.names = node_names::kazoo;
    Mutex m(*s, path, kazoo);
    ASSERT_TRUE(m.try_lock_for(20s));
    EXPECT_EQ(link.replies_dropped(), 1u);
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u) << "a second node would block the queue forever";
    EXPECT_EQ(queue[0].dialect, "kazoo") << queue[0].node;
    EXPECT_EQ(path + "/" + queue[0].node, m.node_path());
    auto released = m.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
}

TEST_F(NetworkFaultTest, GarbledCreateReplyDuringAnAcquireLeavesExactlyOneNodeAndTheAcquireSucceeds) {
    // Found by the chaos suite: a ZooKeeper server that shuts down mid-request
    // (its leader cut off) answered out of order; the C client then fails every
    // pending request with ZRUNTIMEINCONSISTENCY, not ZCONNECTIONLOSS, and the
    // acquire failed with "runtime inconsistency", leaving its node (the
    // create had been applied) to block the queue while the session lived.
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 2000ms);
    EventLog events(*s);
    auto observer = connect();
    create_parents(*observer, path);
    zt::create_node(*observer, path);
    link.garble_next_reply(path + "/_c_");

    Mutex m(*s, path);
    std::error_code ec;
    EXPECT_TRUE(m.try_lock_for(20s, ec));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(link.replies_garbled(), 1u);
    EXPECT_TRUE(events.wait_for(session_event::reconnected)) << "the C client drops the connection";
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u) << "a second (or orphaned) node would block the queue";
    EXPECT_EQ(queue[0].owner_session, s->session_id());
    EXPECT_TRUE(m.is_held());
    auto released = m.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
}

TEST_F(NetworkFaultTest, GarbledReplyToALeaderObserverIsRetried) {
    const auto path = lock_path();
    auto candidate_session = connect();
    LeaderElection candidate(*candidate_session, path, "candidate");
    candidate.campaign();
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 2000ms);
    LeaderElection observer(*s, path, "observer");
    link.garble_next_reply(path);  // the observer's listing
    auto leader = observer.async_wait_leader_change(std::nullopt, boost::asio::use_future);
    ASSERT_EQ(leader.wait_for(20s), std::future_status::ready);
    const auto [ec, info] = leader.get();
    EXPECT_FALSE(ec) << ec.message();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->participant_id, "candidate");
    EXPECT_EQ(link.replies_garbled(), 1u);
    candidate.resign();
}

TEST_F(NetworkFaultTest, AnAcquireRightAfterTheNodeWentWaitsForTheLossReasonInsteadOfFailing) {
    // Found by the chaos suite: once our node is gone, is_held() turns false at
    // once while the reason takes a request (or the session's next event) to
    // learn; an acquire through the same Mutex in that window failed with
    // already_acquiring although the object neither held nor waited.
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 4000ms);
    Mutex holder(*s, path);
    auto lost = first_loss(holder);
    holder.lock();
    auto observer = connect();
    link.delay(300ms);  // the request that learns why takes 600 ms
    zt::delete_node(*observer, holder.node_path());
    ASSERT_TRUE(wait_until([&] { return !holder.is_held(); }));
    EXPECT_NE(lost.wait_for(0ms), std::future_status::ready) << "the reason is not known yet";

    std::error_code ec;
    EXPECT_TRUE(holder.try_lock_for(20s, ec));
    EXPECT_FALSE(ec) << ec.message();
    ASSERT_EQ(lost.wait_for(0ms), std::future_status::ready) << "the loss is reported before the next grant";
    EXPECT_EQ(lost.get(), errc::node_deleted);
    EXPECT_TRUE(holder.is_held());
    link.delay(0ms);
    auto released = holder.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
}

TEST_F(NetworkFaultTest, AnAcquireWaitingForTheLossReasonCanBeCancelled) {
    const auto path = lock_path();
    zt::FaultyLink link(server_->port());
    auto s = connect_through(link, 4000ms);
    Mutex holder(*s, path);
    holder.lock();
    auto observer = connect();
    link.delay(500ms);
    zt::delete_node(*observer, holder.node_path());
    ASSERT_TRUE(wait_until([&] { return !holder.is_held(); }));
    boost::asio::cancellation_signal cancel;
    auto acquired = holder.async_lock(boost::asio::bind_cancellation_slot(cancel.slot(), boost::asio::use_future));
    boost::asio::post(s->get_executor(), [&] { cancel.emit(boost::asio::cancellation_type::terminal); });
    ASSERT_EQ(acquired.wait_for(20s), std::future_status::ready);
    const std::error_code ec = acquired.get();
    EXPECT_EQ(ec, std::errc::operation_canceled) << ec.message();
    link.delay(0ms);
    // Once the loss is known the object queues again normally.
    EXPECT_TRUE(wait_until([&] {
        std::error_code ec;
        const bool ok = holder.try_lock_for(5s, ec);
        return ok && !ec;
    }, 20s));
    holder.unlock();
}

TEST(FaultyLinkCleanup, DestructionClosesConnectionsStopsTheThreadAndHeals) {
    zt::ZooKeeperServer server;
    const auto before = threads_named("zklock-link");
    auto link = std::make_unique<zt::FaultyLink>(server.port());
    EXPECT_EQ(threads_named("zklock-link"), before + 1);
    SessionOptions o;
    o.connect = link->connect_string();
    o.session_timeout = 2000ms;
    Session s(o);
    s.connect();
    EventLog events(s);
    EXPECT_EQ(link->open_connections(), 1u);
    if (!zt::PacketFilter::unavailable()) {
        link->blackhole();
        EXPECT_EQ(zt::zklock_packet_rules(::getpid()).size(), 2u);
    }
    link.reset();
    expect_no_fault_leftovers();
    EXPECT_TRUE(events.wait_for(session_event::suspended)) << "the client sees its connection closed";
}
