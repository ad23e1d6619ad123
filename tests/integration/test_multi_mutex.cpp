// MultiMutex against a real server: mutual exclusion of overlapping sets under
// churn, opposite orders without deadlock, FIFO across sets and with plain
// Mutexes, cancellation and timeouts that leave nothing, loss of the whole set.
// The tests share one server (each on its own paths).
#include "fault_support.hpp"
#include "proof_support.hpp"
#include "support.hpp"

#include "fsm/lock_set.hpp"
#include <zklock/multi_mutex.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/faulty_link.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <map>
#include <random>
#include <set>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;

namespace {

class MultiMutexTest : public ServerTest {
protected:
    std::vector<std::string> paths(const std::vector<std::string>& names) {
        std::vector<std::string> out;
        for (const auto& n : names) out.push_back(lock_path(n));
        return out;
    }
};

} // namespace

TEST_F(MultiMutexTest, ASetHoldsEveryPathWithOneTokenAndOthersWaitOnlyWhereItHolds) {
    const auto p = paths({"a", "b", "c"});
    auto s1 = connect();
    auto s2 = connect();
    MultiMutex ab(*s1, {p[0], p[1]});
    ab.lock();
    EXPECT_TRUE(ab.is_held());

    // Every node of the set has the transaction's zxid as czxid: the token.
    auto observer = connect();
    const auto qa = list_contenders(*observer, p[0]);
    const auto qb = list_contenders(*observer, p[1]);
    ASSERT_EQ(qa.size(), 1u);
    ASSERT_EQ(qb.size(), 1u);
    EXPECT_EQ(qa[0].fencing_token, ab.fencing_token());
    EXPECT_EQ(qb[0].fencing_token, ab.fencing_token());
    EXPECT_EQ(detail::parse_set_node_data(qa[0].data).paths, (std::vector<std::string>{p[0], p[1]}));
    EXPECT_EQ(ab.node_paths()[1], p[1] + "/" + qb[0].node);

    MultiMutex bc(*s2, {p[1], p[2]});
    EXPECT_FALSE(bc.try_lock()) << "b is held";
    Mutex c(*s2, p[2]);
    EXPECT_TRUE(c.try_lock()) << "c is not in the held set";
    c.unlock();

    GrantLog log;
    log.holds("ab");
    auto waiting = log.lock(bc, "bc");
    wait_for_contenders(*observer, p[1], 2, 10s);
    // bc's node is on the server; its position follows once bc has read the queue.
    EXPECT_TRUE(wait_until([&] { return bc.queue_positions()[0] == std::optional<std::size_t>(1); }))
        << "position on " << p[1] << ": " << bc.queue_positions()[0].value_or(0);
    // It watches ab's node on b and its own two nodes (so that a grant is
    // never given on a node someone deleted), nothing else: ab's node is still
    // there, so bc has been told nothing since it decided to wait.
    std::set<std::string> seen;
    EXPECT_TRUE(watches_exactly(*server_, *s2, {ab.node_paths()[1], bc.node_paths()[0], bc.node_paths()[1]}, seen))
        << "bc watches " << listed(seen);
    EXPECT_EQ(waiting.wait_for(0s), std::future_status::timeout);
    log.releasing("ab");
    auto released = ab.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released));
    EXPECT_FALSE(get_within(waiting));
    EXPECT_TRUE(bc.is_held());
    EXPECT_EQ(log.entries(), (std::vector<std::string>{"-ab", "+bc"})) << "bc was granted while ab held b";
    EXPECT_GT(bc.fencing_token(), 0);
    bc.unlock();
}

// 8 clients, each locking a random subset of 4 paths in a random order; every
// path is a resource that counts who is inside it and remembers the highest
// token it saw: never two inside, never an older token after a newer one.
TEST_F(MultiMutexTest, OverlappingSetsUnderChurnNeverShareAPath) {
    const auto p = paths({"p0", "p1", "p2", "p3"});
    struct resource {
        std::atomic<int> inside{0};
        std::atomic<std::int64_t> highest{0};
    };
    std::map<std::string, resource> resources;
    for (const auto& path : p) resources[path];
    std::atomic<int> violations{0};
    std::atomic<int> grants{0};
    constexpr int clients = 8;
    constexpr int rounds = 12;
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            auto s = connect();
            std::mt19937 rng(static_cast<unsigned>(c) + 1);
            for (int r = 0; r < rounds; ++r) {
                auto set = p;
                std::shuffle(set.begin(), set.end(), rng);
                set.resize(1 + rng() % 4);
                MultiMutex m(*s, set);
                if (!m.try_lock_for(30s)) {
                    ++violations;  // a deadlock, or a lost wake-up
                    continue;
                }
                ++grants;
                for (const auto& path : set) {
                    auto& res = resources[path];
                    if (res.inside.fetch_add(1) != 0) ++violations;
                    if (m.fencing_token() < res.highest.load()) ++violations;
                    res.highest = std::max(res.highest.load(), m.fencing_token());
                }
                std::this_thread::yield();
                for (const auto& path : set) resources[path].inside.fetch_sub(1);
                m.unlock();
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(violations.load(), 0);
    EXPECT_EQ(grants.load(), clients * rounds);
}

// Two clients that want {A, B} and {B, A}: with single locks taken in those
// orders they can deadlock; as sets, every round completes.
TEST_F(MultiMutexTest, OppositeOrdersNeverDeadlock) {
    const auto p = paths({"A", "B"});
    std::atomic<int> stuck{0};
    std::atomic<int> done{0};
    auto run = [&](std::vector<std::string> set) {
        auto s = connect();
        MultiMutex m(*s, set);
        for (int r = 0; r < 1000; ++r) {
            if (!m.try_lock_for(20s)) {
                ++stuck;
                return;
            }
            m.unlock();
            ++done;
        }
    };
    std::thread t1(run, std::vector<std::string>{p[0], p[1]});
    std::thread t2(run, std::vector<std::string>{p[1], p[0]});
    t1.join();
    t2.join();
    EXPECT_EQ(stuck.load(), 0);
    EXPECT_EQ(done.load(), 2000);
}

// Grants follow arrival across sets and plain locks: with {A, B} held, a
// Mutex on A, the set {A, B} and a Mutex on B queue in that order. B's Mutex
// waits behind the set (which waits for A's Mutex), and the grants, noted as
// they complete, come in arrival order.
TEST_F(MultiMutexTest, GrantsAreFifoAcrossSetsAndPlainMutexes) {
    const auto p = paths({"A", "B"});
    auto s = connect();
    auto observer = connect();
    MultiMutex holder(*s, p);
    holder.lock();

    std::mutex order_mutex;
    std::vector<std::string> order;
    auto granted = [&](std::string who) {
        return [&, who](std::error_code ec) {
            EXPECT_FALSE(ec) << who;
            std::lock_guard lk(order_mutex);
            order.push_back(who);
        };
    };
    auto noted = [&](std::size_t n) {
        return wait_until([&] {
            std::lock_guard lk(order_mutex);
            return order.size() >= n;
        });
    };
    auto s1 = connect();
    auto s2 = connect();
    auto s3 = connect();
    Mutex on_a(*s1, p[0]);
    MultiMutex both(*s2, p);
    Mutex on_b(*s3, p[1]);
    on_a.async_lock(granted("A"));
    wait_for_contenders(*observer, p[0], 2, 10s);
    both.async_lock(granted("set"));
    wait_for_contenders(*observer, p[0], 3, 10s);
    on_b.async_lock(granted("B"));
    wait_for_contenders(*observer, p[1], 3, 10s);

    holder.unlock();
    ASSERT_TRUE(noted(1));
    // The set is first in B now (the holder's nodes went in one transaction),
    // and still waits for A.
    EXPECT_TRUE(wait_until([&] { return both.queue_positions()[1] == std::optional<std::size_t>(0); }));
    EXPECT_FALSE(both.is_held()) << "the set was granted while A's Mutex holds A";
    on_a.unlock();
    ASSERT_TRUE(noted(2));
    if (both.is_held()) both.unlock();
    ASSERT_TRUE(noted(3));
    if (on_b.is_held()) on_b.unlock();
    if (both.is_held()) both.unlock();
    std::lock_guard lk(order_mutex);
    EXPECT_EQ(order, (std::vector<std::string>{"A", "set", "B"}));
}

TEST_F(MultiMutexTest, CancelAndTimeoutLeaveNoNodeInAnyDirectory) {
    const auto p = paths({"a", "b", "c"});
    auto s1 = connect();
    auto s2 = connect();
    auto observer = connect();
    Mutex holder(*s1, p[1]);  // the sets wait in b only
    holder.lock();

    MultiMutex timed(*s2, p);
    EXPECT_FALSE(timed.try_lock_for(300ms));
    for (const auto& path : p)
        EXPECT_EQ(list_contenders(*observer, path).size(), path == p[1] ? 1u : 0u) << path;

    MultiMutex cancelled(*s2, p);
    boost::asio::cancellation_signal signal;
    auto f = cancelled.async_lock(boost::asio::bind_cancellation_slot(signal.slot(), boost::asio::use_future));
    wait_for_contenders(*observer, p[0], 1, 10s);
    wait_for_contenders(*observer, p[1], 2, 10s);
    boost::asio::post(s2->get_executor(), [&] { signal.emit(boost::asio::cancellation_type::terminal); });
    EXPECT_EQ(get_within(f), std::errc::operation_canceled);
    for (const auto& path : p)
        EXPECT_EQ(list_contenders(*observer, path).size(), path == p[1] ? 1u : 0u) << path;
    holder.unlock();
}

TEST_F(MultiMutexTest, ExpiryWhileHoldingReportsLossAndFreesEveryQueue) {
    const auto p = paths({"a", "b"});
    auto s1 = connect();
    auto s2 = connect();
    MultiMutex set(*s1, p);
    auto lost = first_loss(set);
    set.lock();
    Mutex on_a(*s2, p[0]);
    Mutex on_b(*s2, p[1]);
    auto fa = on_a.async_lock(boost::asio::use_future);
    auto fb = on_b.async_lock(boost::asio::use_future);
    zt::expire_session(*s1);
    EXPECT_EQ(get_within(lost, 15s), errc::session_expired);
    EXPECT_FALSE(set.is_held());
    EXPECT_FALSE(get_within(fa));
    EXPECT_FALSE(get_within(fb));
    on_a.unlock();
    on_b.unlock();
}

TEST_F(MultiMutexTest, ANodeDeletedBySomeoneElseLosesTheSetAndItsOtherNodesGo) {
    const auto p = paths({"a", "b", "c"});
    auto s = connect();
    auto observer = connect();
    MultiMutex set(*s, p);
    auto lost = first_loss(set);
    set.lock();
    Mutex on_c(*observer, p[2]);
    auto fc = on_c.async_lock(boost::asio::use_future);
    zt::delete_node(*observer, set.node_paths()[0]);
    EXPECT_EQ(get_within(lost), errc::node_deleted);
    EXPECT_FALSE(set.is_held());
    EXPECT_FALSE(get_within(fc)) << "the set's node in c must go with the set";
    wait_for_contenders(*observer, p[1], 0, 10s);
    on_c.unlock();
}

// The transaction committed and its reply was lost: the set finds its guid in
// every directory and adopts those nodes instead of creating a second set
// (which would queue behind the first forever).
TEST_F(MultiMutexTest, ALostTransactionReplyIsRecoveredByTheGuidInEveryDirectory) {
    const auto p = paths({"a", "b"});
    auto observer = connect();
    for (const auto& path : p) {  // so the transaction is the first request naming them
        create_parents(*observer, path);
        zt::create_node(*observer, path);
    }
    {
        zt::FaultyLink link(server_->port());
        auto o = options();
        o.connect = link.connect_string();
        Session s(o);
        s.connect();
        EventLog events(s);
        link.drop_next_reply(p[0] + "/_c_");
        MultiMutex set(s, p);
        ASSERT_TRUE(set.try_lock_for(20s));
        EXPECT_EQ(link.replies_dropped(), 1u);
        EXPECT_TRUE(events.wait_for(session_event::reconnected));
        for (const auto& path : p) {
            const auto queue = list_contenders(*observer, path);
            ASSERT_EQ(queue.size(), 1u) << path << ": a second node would block the queue forever";
            EXPECT_EQ(queue[0].owner_session, s.session_id());
            EXPECT_EQ(queue[0].fencing_token, set.fencing_token());
        }
        auto released = set.async_unlock(boost::asio::use_future);
        EXPECT_FALSE(get_within(released));
    }
    expect_no_fault_leftovers();
}
