// `zklock run PATH [PATH...] -- CMD` (a lock set), `zklock status` on a set's
// queue, and `zklock run --lock-delay`. The tests share one server.
#include "test_cli_support.hpp"

#include <zklock/multi_mutex.hpp>
#include <zklock/testing/faults.hpp>

#include <nlohmann/json.hpp>

#include <csignal>
#include <sstream>

using namespace zklock;
using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

class CliMultiTest : public CliTest {
protected:
    // run -c HOSTS [extra] PATH... -- CMD...
    std::vector<std::string> run_set(const std::vector<std::string>& paths, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"run", "-c", server_->connect_string()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(), paths.begin(), paths.end());
        args.push_back("--");
        return args;
    }
};

} // namespace

TEST_F(CliMultiTest, RunTakesSeveralPathsAsOneSetAndStatusNamesTheOthers) {
    const std::vector<std::string> paths = {lock_path("a"), lock_path("b")};
    const auto env_file = cli_.file("env");
    auto holder = cli_.start(plus(run_set({paths[1], paths[0]}),
                                  {"sh", "-c", "echo \"$ZKLOCK_FENCING_TOKEN\" > \"$0.tmp\"; "
                                               "echo \"$ZKLOCK_LOCK_NODE\" >> \"$0.tmp\"; mv \"$0.tmp\" \"$0\"; "
                                               "exec sleep 600",
                                   env_file.string()}),
                             "holder");
    wait_for_line(env_file);
    std::istringstream env(read_file(env_file));
    std::int64_t token = 0;
    std::string node_b, node_a;
    env >> token >> node_b >> node_a;
    EXPECT_EQ(node_b.rfind(paths[1] + "/_c_", 0), 0u) << node_b;
    EXPECT_EQ(node_a.rfind(paths[0] + "/_c_", 0), 0u) << node_a;

    // A plain Mutex on either path waits; the set's token is its nodes' czxid.
    auto s = connect();
    Mutex a(*s, paths[0]);
    EXPECT_FALSE(a.try_lock());
    const auto queue = list_contenders(*s, paths[0]);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(queue[0].fencing_token, token);

    auto text = cli_.start({"status", "-c", server_->connect_string(), "-o", "wide", paths[0]}, "text");
    EXPECT_EQ(exit_code(text), 0);
    EXPECT_NE(cli_.output("text").find("[lock set, also: " + paths[1] + "]"), std::string::npos) << cli_.output("text");
    auto json = cli_.start({"status", "-c", server_->connect_string(), "--json", paths[1]}, "json");
    EXPECT_EQ(exit_code(json), 0);
    const auto doc = nlohmann::json::parse(cli_.output("json"));
    EXPECT_EQ(doc.at("contenders")[0].at("lock_set"), (std::vector<std::string>{paths[1], paths[0]})) << doc.dump();
    EXPECT_EQ(doc.at("contenders")[0].at("data").get<std::string>().find("lock set"), std::string::npos);

    ASSERT_EQ(::kill(holder.pid(), SIGTERM), 0);
    EXPECT_EQ(exit_code(holder), 143) << cli_.output("holder");
    EXPECT_TRUE(a.try_lock_for(10s)) << "the set's release freed every path";
    a.unlock();
}

TEST_F(CliMultiTest, RunRefusesNestedOrRepeatedPathsAndPermitsForASet) {
    const auto a = lock_path("a");
    auto nested = cli_.start(plus(run_set({a, a + "/b"}), {"true"}), "nested");
    EXPECT_EQ(exit_code(nested), 64);
    EXPECT_NE(cli_.output("nested").find("is under"), std::string::npos) << cli_.output("nested");
    auto twice = cli_.start(plus(run_set({a, a}), {"true"}), "twice");
    EXPECT_EQ(exit_code(twice), 64);
    EXPECT_NE(cli_.output("twice").find("twice"), std::string::npos) << cli_.output("twice");
    auto permits = cli_.start(plus(run_set({a, lock_path("c")}, {"--permits", "2"}), {"true"}), "permits");
    EXPECT_EQ(exit_code(permits), 64);
    EXPECT_NE(cli_.output("permits").find("--permits"), std::string::npos) << cli_.output("permits");
}

TEST_F(CliMultiTest, RunLockDelayWaitsAfterALostHolder) {
    const auto path = lock_path();
    auto s = connect();
    MutexOptions o;
    o.lock_delay = 1500ms;
    Mutex holder(*s, path, o);
    holder.lock();
    const auto marker = cli_.file("ran");
    auto waiter = cli_.start(plus(run_set({path}, {"--lock-delay", "1.5s"}), {"touch", marker.string()}), "waiter");
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; }));
    const auto lost_at = std::chrono::steady_clock::now();
    zklock::testing::delete_node(*s, holder.node_path());  // lost, not released
    EXPECT_EQ(exit_code(waiter), 0) << cli_.output("waiter");
    EXPECT_TRUE(std::filesystem::exists(marker));
    EXPECT_GE(std::chrono::steady_clock::now() - lost_at, 1500ms);
    auto bad = cli_.start(plus(run_set({path}, {"--lock-delay", "soon"}), {"true"}), "bad");
    EXPECT_EQ(exit_code(bad), 64) << cli_.output("bad");
}

// zklock bench --scenario multi: one result line per method, each accounting
// for every attempt (acquired or timed out).
TEST_F(CliMultiTest, BenchMultiReportsEveryMethodsAcquisitionsAndTimeouts) {
    auto bench = cli_.start({"bench", "-c", server_->connect_string(), "--scenario", "multi", "--clients", "2",
                             "--lock-paths", "3", "--ops", "10", "--acquire-timeout", "500", "--warmup", "0", "--json",
                             "--path", lock_path("bench")},
                            "bench");
    ASSERT_EQ(exit_code(bench, 120s), 0) << cli_.output("bench");
    std::vector<std::string> methods;
    std::istringstream lines(cli_.output("bench"));
    for (std::string line; std::getline(lines, line);) {
        if (line.empty() || line.front() != '{') continue;
        const auto j = nlohmann::json::parse(line);
        EXPECT_EQ(j.at("scenario"), "multi");
        EXPECT_EQ(j.at("ops").get<int>() + j.at("timeouts").get<int>(), 10) << line;
        methods.push_back(j.at("backend"));
    }
    EXPECT_EQ(methods, (std::vector<std::string>{"zklock MultiMutex", "zklock single locks, sorted order",
                                                 "zklock single locks, caller's order"}));
}
