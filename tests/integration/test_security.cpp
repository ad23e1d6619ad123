// Locks nobody else can steal: authentication, ACLs, hostile neighbours, and
// input refused before any server call. Real ZooKeeper servers.
#include "support.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/testing/faults.hpp>

#include "fsm/acl_check.hpp"
#include "fsm/limits.hpp"
#include "fsm/lock_node.hpp"

#include <boost/asio/use_future.hpp>

#include <future>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;

namespace {
const auth_entry alice{"digest", "alice:alice-secret"};
const auth_entry mallory{"digest", "mallory:mallory-secret"};
} // namespace

class SecurityTest : public ServerTest {
protected:
    // The tests make lock directories and their parents with alice's ACL: each
    // test has a root of its own, so the next one (sharing the server) is not
    // shut out.
    std::string path_root() const override {
        return std::string("/zklock-tests-") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    }

    void SetUp() override {
        ServerTest::SetUp();
        observer_auth_ = {alice};
    }

    std::unique_ptr<Session> session(std::vector<auth_entry> auth, acl_list acl = acls::open_unsafe()) {
        auto o = options();
        o.auth = std::move(auth);
        o.acl = std::move(acl);
        auto s = std::make_unique<Session>(o);
        s->connect();
        return s;
    }

    /// The lock nodes under `path`, read by alice.
    std::vector<contender> queue(const std::string& path) {
        auto s = session({alice});
        return list_contenders(*s, path);
    }

    /// A neighbour tries everything it can against alice's held lock: delete the
    /// holder's node, queue a forged persistent node ahead of everyone, open the
    /// directory's ACL. Each must fail with no_auth, and alice must keep the lock.
    void expect_neighbour_refused(Session& neighbour, Mutex& held, const std::string& path) {
        std::atomic<bool> lost{false};
        held.on_lost([&](std::error_code) { lost = true; });
        const auto node = held.node_path();
        auto code = [](const std::function<void()>& f) -> std::error_code {
            try {
                f();
            } catch (const zklock::error& e) {
                return e.code();
            }
            return {};
        };
        EXPECT_EQ(code([&] { zt::delete_node(neighbour, node); }), errc::no_auth);
        EXPECT_EQ(code([&] { zt::create_node(neighbour, path + "/_c_forged-lock-0000000000", "x"); }), errc::no_auth);
        EXPECT_EQ(code([&] { zt::set_acl(neighbour, path, acls::open_unsafe()); }), errc::no_auth);
        EXPECT_EQ(code([&] { zt::set_acl(neighbour, node, acls::open_unsafe()); }), errc::no_auth);
        // alice still holds the lock, and hers is the only node.
        EXPECT_TRUE(held.is_held());
        const auto q = queue(path);
        ASSERT_EQ(q.size(), 1u);
        EXPECT_EQ(path + "/" + q[0].node, node);
        EXPECT_FALSE(lost.load());
        // The directory's ACL is still alice's.
        const auto acl = zt::get_acl(*session({alice}), path);
        EXPECT_FALSE(detail::first_excess(acl, detail::expand_policy(acls::creator_all_world_read(), {alice})))
            << to_string(acl);
    }
};

TEST_F(SecurityTest, AnUnauthenticatedNeighbourCannotStealBlockOrLockOutTheHolder) {
    const auto path = lock_path();
    auto a = session({alice}, acls::creator_all());
    Mutex held(*a, path);
    held.lock();
    auto neighbour = session({});
    expect_neighbour_refused(*neighbour, held, path);
    held.unlock();
}

TEST_F(SecurityTest, AnotherIdentityCannotStealBlockOrLockOutTheHolder) {
    const auto path = lock_path();
    auto a = session({alice}, acls::creator_all());
    Mutex held(*a, path);
    held.lock();
    auto neighbour = session({mallory});
    expect_neighbour_refused(*neighbour, held, path);
    // Nor can it take the lock: refused at once, with the path and its identity.
    Mutex theirs(*neighbour, path);
    std::error_code ec;
    theirs.lock(ec);
    EXPECT_EQ(ec, errc::no_auth);
    EXPECT_FALSE(theirs.is_held());
    const auto detail = theirs.failure_detail();
    EXPECT_NE(detail.find("digest:mallory"), std::string::npos) << detail;
    EXPECT_NE(detail.find(path), std::string::npos) << detail;
    EXPECT_EQ(detail.find("secret"), std::string::npos) << detail;
    try {
        theirs.lock();
        ADD_FAILURE() << "no throw";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::no_auth);
        EXPECT_NE(std::string(e.what()).find("digest:mallory"), std::string::npos) << e.what();
    }
    held.unlock();
}

TEST_F(SecurityTest, AWrongPasswordIsAnotherIdentity) {
    const auto path = lock_path();
    auto a = session({alice}, acls::creator_all());
    Mutex held(*a, path);
    held.lock();
    auto guess = session({{"digest", "alice:guess"}});
    Mutex m(*guess, path);
    std::error_code ec;
    EXPECT_FALSE(m.try_lock(ec));
    EXPECT_EQ(ec, errc::no_auth);
    held.unlock();
}

TEST_F(SecurityTest, AuthIsAppliedAgainAfterTheSessionExpires) {
    const auto path = lock_path();
    auto a = session({alice}, acls::creator_all());
    auto keeper = session({alice}, acls::creator_all());
    Mutex keep(*keeper, path);  // keeps the (container) directory and its ACL alive
    keep.lock();
    Mutex m(*a, path);
    auto granted = m.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return m.queue_position() == 1u; }));
    EventLog events(*a);
    zt::expire_session(*a);
    ASSERT_TRUE(events.wait_for(session_event::connected));
    // The new session queues again under a directory only alice may write: only
    // possible if it authenticated as alice.
    ASSERT_TRUE(wait_until([&] { return queue(path).size() == 2u; }));
    keep.unlock();
    EXPECT_FALSE(get_within(granted));
    EXPECT_TRUE(m.is_held());
    auto released = m.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(released)) << "the new session could not delete its node";
}

TEST_F(SecurityTest, ASchemeTheServerRefusesFailsTheSessionAtOnce) {
    auto o = options();
    o.auth = {{"nosuchscheme", "whatever"}};
    Session s(o);
    std::error_code ec;
    s.connect(ec);
    EXPECT_EQ(ec, errc::auth_failed);
    EXPECT_FALSE(is_retryable(ec));
    EXPECT_EQ(s.state(), session_state::closed);
    Mutex m(s, lock_path());
    m.lock(ec);
    EXPECT_EQ(ec, errc::session_closed);
}

TEST_F(SecurityTest, AnOpenDirectoryMadeBySomeoneElseIsReportedNotUsed) {
    const auto path = lock_path();
    auto open = session({});
    for (auto slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
        zt::create_node(*open, path.substr(0, slash));
    zt::create_node(*open, path);
    auto a = session({alice}, acls::creator_all());
    Mutex m(*a, path);
    std::error_code ec;
    m.lock(ec);
    EXPECT_EQ(ec, errc::insecure_acl);
    EXPECT_FALSE(is_retryable(ec));
    const auto detail = m.failure_detail();
    EXPECT_NE(detail.find("world:anyone:cdrwa"), std::string::npos) << detail;
    EXPECT_NE(detail.find(path), std::string::npos) << detail;
    EXPECT_TRUE(queue(path).empty()) << "the failed acquire left its node";
    // With the directory's ACL set to the policy, the lock works.
    zt::set_acl(*open, path, {digest_acl("alice", "alice-secret")});
    m.lock(ec);
    EXPECT_FALSE(ec) << ec.message() << ": " << m.failure_detail();
    m.unlock();
    zt::delete_node(*a, path);
}

TEST_F(SecurityTest, WorldReadLetsAnyoneSeeTheQueueAndNothingMore) {
    const auto path = lock_path();
    auto a = session({alice}, acls::creator_all_world_read());
    Mutex held(*a, path);
    held.lock();
    auto anyone = session({});
    const auto q = list_contenders(*anyone, path);
    ASSERT_EQ(q.size(), 1u);
    EXPECT_EQ(path + "/" + q[0].node, held.node_path());
    expect_neighbour_refused(*anyone, held, path);
    held.unlock();

    const auto closed = lock_path("closed");
    auto b = session({alice}, acls::creator_all());
    Mutex private_lock(*b, closed);
    private_lock.lock();
    std::error_code ec;
    list_contenders(*anyone, closed, ec);
    EXPECT_EQ(ec, errc::no_auth);
    private_lock.unlock();
}

TEST_F(SecurityTest, APersistentNodeInTheQueueIsShownAndFailsTheWaiterInsteadOfHangingIt) {
    observer_auth_ = {};
    const auto path = lock_path();
    auto s = session({});
    Mutex first(*s, path);
    first.lock();  // creates the directory
    const auto forged = path + "/_c_forged-lock-0000000000";
    zt::create_node(*s, forged, "forged");
    first.unlock();
    ASSERT_TRUE(wait_until([&] { return list_contenders(*s, path).size() == 1u; }));

    const auto q = list_contenders(*s, path);
    ASSERT_EQ(q.size(), 1u);
    EXPECT_TRUE(q[0].persistent);
    EXPECT_EQ(q[0].owner_session, 0);

    Mutex m(*s, path);
    std::error_code ec;
    // Bounded, so that a waiter that does wait forever fails here instead of hanging.
    EXPECT_FALSE(m.try_lock_for(20s, ec));
    EXPECT_EQ(ec, errc::blocked_by_persistent_node);
    EXPECT_FALSE(m.is_held());
    const auto detail = m.failure_detail();
    EXPECT_NE(detail.find(forged), std::string::npos) << detail;
    EXPECT_NE(detail.find("delete"), std::string::npos) << detail;
    EXPECT_EQ(list_contenders(*s, path).size(), 1u) << "the failed acquire left its node";
    // Removed by hand (as the docs say), the lock works again.
    zt::delete_node(*s, forged);
    m.lock();
    m.unlock();
}

TEST_F(SecurityTest, NodeDataTooLargeIsRefusedBeforeAnyServerCall) {
    // No server at this address: whatever is refused here was refused locally.
    SessionOptions o;
    o.connect = "127.0.0.1:1";
    o.connect_timeout = 1s;
    Session nowhere(o);
    MutexOptions big;
    big.node_data.assign(1 << 20, 'x');
    try {
        Mutex m(nowhere, "/locks/big", big);
        ADD_FAILURE() << "1 MiB of node data accepted";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("jute.maxbuffer"), std::string::npos) << e.what();
    }
    std::error_code ec;
    Mutex m(nowhere, "/locks/big", big, ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    m.lock(ec);
    EXPECT_EQ(ec, errc::invalid_argument);  // at once: not connection_loss or a timeout
    EXPECT_THROW(LeaderElection(nowhere, "/elections/big", std::string(2 << 20, 'i')), zklock::error);
    SemaphoreOptions so;
    so.node_data = big.node_data;
    EXPECT_THROW(Semaphore(nowhere, "/queues/big", 2, so), zklock::error);
    EXPECT_THROW(Semaphore(nowhere, "/queues/many", std::size_t{1} << 31), zklock::error);
    MutexOptions needs_auth;
    needs_auth.acl = acls::creator_all();
    EXPECT_THROW(Mutex(nowhere, "/locks/acl", needs_auth), zklock::error);
}

TEST_F(SecurityTest, TheLargestNodeDataTheLimitAllowsIsAcceptedByTheServer) {
    // The bound is not stricter than the server: data of exactly the computed
    // limit is created, one byte more is refused locally.
    observer_auth_ = {};
    const auto path = lock_path();
    auto s = connect();
    const std::size_t server_path = path.size() + 1 + detail::node_name_prefix(std::string(36, '0')).size();
    const auto limit = detail::default_max_request_bytes - detail::create_request_overhead(server_path, acls::open_unsafe());
    MutexOptions o;
    o.node_data.assign(limit, 'd');
    Mutex m(*s, path, o);
    // Bounded: a request the server refuses is resent on every reconnect, forever.
    EXPECT_TRUE(m.try_lock_for(20s));
    EXPECT_TRUE(m.is_held());
    m.unlock();
    o.node_data.push_back('d');
    EXPECT_THROW(Mutex(*s, path, o), zklock::error);
}

TEST_F(SecurityTest, PathsTheServerRefusesAreRefusedFirst) {
    observer_auth_ = {};
    auto s = connect();
    std::error_code ec;
    Mutex m(*s, "/\xf0\x9f\x94\x92", {}, ec);  // U+1F512: the server sees a surrogate pair
    EXPECT_EQ(ec, errc::invalid_path);
    EXPECT_NE(m.failure_detail().find("Basic Multilingual Plane"), std::string::npos) << m.failure_detail();
}

TEST_F(SecurityTest, TryLockForZeroTriesOnceAndForeverWaitsForever) {
    observer_auth_ = {};
    const auto path = lock_path();
    auto a = connect();
    auto b = connect();
    Mutex m(*a, path);
    EXPECT_TRUE(m.try_lock_for(0s)) << "try_lock_for(0) on a free lock must acquire, as try_lock does";
    Mutex other(*b, path);
    EXPECT_FALSE(other.try_lock_for(0s));
    EXPECT_FALSE(other.try_lock_for(-5s));
    EXPECT_EQ(list_contenders(*b, path).size(), 1u);
    // hours::max() does not overflow into "already passed": it waits for the holder.
    auto waited = std::async(std::launch::async, [&] { return other.try_lock_for(std::chrono::hours::max()); });
    ASSERT_TRUE(wait_until([&] { return other.queue_position() == 1u; }));
    m.unlock();
    EXPECT_TRUE(get_within(waited));
    other.unlock();
}
