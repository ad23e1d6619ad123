// Guarded transactions against a real server: writes commit while the lock is
// held, all of them; once the hold's node is gone (deleted by an operator, or
// its session expired on the server) nothing of the batch is applied, whoever
// sends it: the holder itself or another process that knows the lock's node
// (as `zklock run` tells its command).
#include "support.hpp"

#include <zklock/guarded_write.hpp>
#include <zklock/leader_election.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/testing/faults.hpp>

#include <boost/asio/use_future.hpp>

#include <future>
#include <string>
#include <thread>
#include <vector>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;

namespace {

class GuardedWriteTest : public ServerTest {
protected:
    // The suite hands its server on to the next suite of its ctest group.
    static void TearDownTestSuite() {}

    // A directory for the test's data, outside its lock paths.
    std::string data_dir(Session& s) {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        const std::string dir = path_root() + "/" + info->name() + "-data";
        try {
            zt::create_node(s, path_root());
        } catch (const error&) {
        }
        zt::create_node(s, dir);
        return dir;
    }
    // The names of `dir`'s children, as the server has them.
    static std::vector<std::string> children(Session& s, const std::string& dir) {
        return list_queue(s, dir).foreign;
    }
};

} // namespace

TEST_F(GuardedWriteTest, AHolderCommitsEveryOperationInOneTransaction) {
    auto s = connect();
    const auto dir = data_dir(*s);
    Mutex m(*s, lock_path());
    m.lock();
    const auto r = m.commit_guarded({guarded_op::create(dir + "/state", "v1"), guarded_op::set_data(dir + "/state", "v2", 0),
                                     guarded_op::sequential(dir + "/log-", "entry"), guarded_op::check(dir + "/state", 1)});
    ASSERT_EQ(r.created.size(), 4u);
    EXPECT_EQ(r.created[0], dir + "/state");
    EXPECT_EQ(r.created[2].rfind(dir + "/log-", 0), 0u) << r.created[2];
    EXPECT_EQ(r.created[1], "");
    const std::string log = r.created[2].substr(dir.size() + 1);
    EXPECT_EQ(children(*s, dir), (std::vector<std::string>{log, "state"}));

    // One failing operation (a version that moved on) applies nothing of the batch.
    std::error_code ec;
    const auto bad = m.commit_guarded({guarded_op::create(dir + "/second"), guarded_op::set_data(dir + "/state", "v3", 0)}, ec);
    EXPECT_EQ(ec, errc::bad_version);
    ASSERT_TRUE(bad.failed_op.has_value());
    EXPECT_EQ(*bad.failed_op, 1u);
    EXPECT_EQ(bad.created, (std::vector<std::string>{"", ""}));
    EXPECT_EQ(children(*s, dir), (std::vector<std::string>{log, "state"}));
    try {
        m.commit_guarded({guarded_op::create(dir + "/state")});
        ADD_FAILURE() << "created an existing node";
    } catch (const error& e) {
        EXPECT_EQ(e.code(), errc::node_exists);
        EXPECT_NE(std::string(e.what()).find("operation 0 on " + dir + "/state"), std::string::npos) << e.what();
    }
    m.unlock();
    EXPECT_EQ(m.commit_guarded({guarded_op::create(dir + "/after")}, ec).created[0], "");
    EXPECT_EQ(ec, errc::not_held);
    EXPECT_EQ(children(*s, dir), (std::vector<std::string>{log, "state"}));
}

// Whoever sends it, the guard is checked at the commit: once an operator
// deleted the holder's node, neither the holder (which may not know yet) nor
// another session naming the node gets anything applied.
TEST_F(GuardedWriteTest, NothingIsAppliedOnceTheLockNodeWasDeleted) {
    auto s = connect();
    auto other = connect();
    const auto dir = data_dir(*s);
    Mutex m(*s, lock_path());
    m.lock();
    const auto node = m.node_path();
    // Another process that knows the node (zklock run's ZKLOCK_LOCK_NODE) writes under it.
    EXPECT_EQ(commit_guarded(*other, {node}, {guarded_op::create(dir + "/by-other")}).created[0], dir + "/by-other");

    auto lost = m.async_wait_lost(boost::asio::use_future);
    zt::delete_node(*other, node);
    std::error_code ec;
    const auto r = commit_guarded(*other, {node}, {guarded_op::create(dir + "/late"), guarded_op::erase(dir + "/by-other")}, ec);
    EXPECT_EQ(ec, errc::node_deleted);
    EXPECT_FALSE(r.failed_op.has_value());
    EXPECT_EQ(get_within(lost), errc::node_deleted);
    m.commit_guarded({guarded_op::create(dir + "/late")}, ec);
    EXPECT_TRUE(ec == errc::not_held || ec == errc::node_deleted) << ec.message();
    EXPECT_EQ(children(*s, dir), (std::vector<std::string>{"by-other"}));
}

// A real expiry: the holder's process is frozen while the server expires its
// session. Its write, sent when it wakes believing it holds, applies nothing,
// and neither does one sent by another session naming the node.
TEST_F(GuardedWriteTest, NothingIsAppliedAfterTheHoldersSessionExpired) {
    auto s = connect();
    auto other = connect();
    const auto dir = data_dir(*other);
    Mutex m(*s, lock_path());
    m.lock();
    const auto node = m.node_path();
    std::future<std::error_code> late;
    {
        zt::SessionFreeze freeze(*s);
        freeze.expire();
        EXPECT_TRUE(m.is_held()) << "the frozen holder cannot know yet";
        late = std::async(std::launch::async, [&] {
            std::error_code ec;
            m.commit_guarded({guarded_op::create(dir + "/late")}, ec);
            return ec;
        });
        std::error_code ec;
        commit_guarded(*other, {node}, {guarded_op::create(dir + "/by-other")}, ec);
        EXPECT_EQ(ec, errc::node_deleted);
    }  // thawed: the holder's request goes out, on the expired session or a new one
    const auto ec = get_within(late);
    EXPECT_TRUE(ec == errc::session_expired || ec == errc::node_deleted || ec == errc::not_held ||
                ec == errc::connection_loss)
        << ec.message();
    EXPECT_EQ(children(*other, dir), std::vector<std::string>{});
}

TEST_F(GuardedWriteTest, ASetAndALeaderGuardWithTheirOwnNodes) {
    auto s = connect();
    auto other = connect();
    const auto dir = data_dir(*s);
    MultiMutex set(*s, {lock_path("a"), lock_path("b")});
    set.lock();
    EXPECT_EQ(set.commit_guarded({guarded_op::create(dir + "/by-set")}).created[0], dir + "/by-set");
    zt::delete_node(*other, set.node_paths()[1]);  // one of the set's nodes goes: the set no longer holds
    std::error_code ec;
    set.commit_guarded({guarded_op::create(dir + "/late-set")}, ec);
    EXPECT_TRUE(ec == errc::node_deleted || ec == errc::not_held) << ec.message();
    set.unlock();

    LeaderElection election(*s, lock_path("election"), "me");
    election.commit_guarded({guarded_op::create(dir + "/not-leading")}, ec);
    EXPECT_EQ(ec, errc::not_held);
    const auto term = election.campaign();
    EXPECT_EQ(election.commit_guarded({guarded_op::create(dir + "/by-leader")}).created[0], dir + "/by-leader");
    election.resign();
    EXPECT_EQ(children(*s, dir), (std::vector<std::string>{"by-leader", "by-set"}));
    (void)term;
}

TEST_F(GuardedWriteTest, BadInputIsRefusedBeforeAnyServerCall) {
    auto s = connect();
    std::error_code ec;
    commit_guarded(*s, {}, {guarded_op::create(path_root() + "/x")}, ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    commit_guarded(*s, {"relative/node"}, {}, ec);
    EXPECT_EQ(ec, errc::invalid_path);
    commit_guarded(*s, {path_root() + "/n"}, {guarded_op::set_data(path_root() + "/x", "d", -2)}, ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    commit_guarded(*s, {path_root() + "/n"}, {guarded_op::create(path_root() + "/x", std::string(2u << 20, 'x'))}, ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    try {
        commit_guarded(*s, {path_root() + "/n"}, {guarded_op::create("/zookeeper/x")});
        ADD_FAILURE() << "a reserved path was sent";
    } catch (const error& e) {
        EXPECT_EQ(e.code(), errc::invalid_path);
    }
}
