// zklock bench on an ensemble: --ensemble N starts a loopback ensemble of its
// own and runs each mutex scenario on a follower, then on the leader, zklock,
// the C client's floor and the peers alike, every row saying which; it stops
// every server it started. Options that do not go with it are refused in one
// line before anything starts. --busy K spins K processes beside the run,
// which end with it, also when a signal ends the bench.
#include "json_output.hpp"
#include "process_support.hpp"
#include "test_cli_support.hpp"

#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

/// Whether a process of bench `pid`'s --busy still runs (their command line
/// names the bench's pid).
bool busy_process_running(pid_t pid) {
    const auto tag = "zklock-bench-busy " + std::to_string(pid) + " ";
    for (const auto& dir : process_dirs())
        if ((read_cmdline(dir) + " ").find(tag) != std::string::npos) return true;
    return false;
}

/// The rows of `rows` of `backend` on `server`.
std::vector<nlohmann::json> rows_of(const std::vector<nlohmann::json>& rows, const std::string& backend,
                                    const std::string& server) {
    std::vector<nlohmann::json> out;
    for (const auto& r : rows)
        if (r.value("backend", "") == backend && r.value("server", "") == server) out.push_back(r);
    return out;
}

TEST(CliBenchEnsembleTest, ContendedRunsOnAFollowerThenOnTheLeaderAndLeavesNoServer) {
    Cli cli;
    // TMPDIR puts the ensemble's directories (and so its servers' command lines) in here.
    const auto tmp = cli.file("tmp");
    std::filesystem::create_directories(tmp);
    auto p = cli.start({"bench", "contended", "--ensemble", "3", "--clients", "2", "--ops", "20", "--warmup", "0",
                        "--kazoo", "--json"},
                       "bench", {{"TMPDIR", tmp.string()}});
    ASSERT_EQ(exit_code(p, 300s), 0) << cli.output("bench");
    const auto out = cli.output("bench");
    // Qualified: a test of status --watch has a json_lines() of its own (a file's), which a unity build would pick.
    const auto rows = zklock::test::json_lines(out);
    for (const char* server : {"follower", "leader"})
        for (const char* backend : {"zookeeper", "c-client floor", "kazoo"}) {
            const auto found = rows_of(rows, backend, server);
            ASSERT_EQ(found.size(), 1u) << backend << " on the " << server << ":\n" << out;
            EXPECT_EQ(found[0].at("scenario"), "contended") << out;
            EXPECT_EQ(found[0].at("ensemble"), 3) << out;
            EXPECT_EQ(found[0].at("busy"), 0) << out;
            EXPECT_GT(found[0].value("ops_per_s", 0.0), 0.0) << out;
        }
    EXPECT_EQ(rows.size(), 6u) << out;
    // Every row of the follower's pass before the leader's.
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(rows.front().at("server"), "follower") << out;
    EXPECT_EQ(rows.back().at("server"), "leader") << out;
    EXPECT_FALSE(quorum_peer_running_with(tmp.string())) << "a server of the bench is left";
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the ensemble's directories are left in " << tmp;
}

TEST(CliBenchEnsembleTest, RefusesWhatDoesNotGoWithItInOneLineBeforeStartingAnything) {
    Cli cli;
    const auto tmp = cli.file("tmp");
    std::filesystem::create_directories(tmp);
    const std::vector<std::vector<std::string>> refused = {
        {"bench", "contended", "--ensemble", "4"},
        {"bench", "all", "--ensemble", "3", "-c", "127.0.0.1:2181"},
        {"bench", "--ensemble", "3", "--backend", "zookeeper"},
        {"bench", "--scenario", "waiters", "--ensemble", "3"},
        {"bench", "uncontended", "--busy", "17"},
        {"bench", "--busy", "2", "--report", cli.file("report").string()},
    };
    for (std::size_t i = 0; i < refused.size(); ++i) {
        const auto name = "refused-" + std::to_string(i);
        auto p = cli.start(refused[i], name, {{"TMPDIR", tmp.string()}});
        EXPECT_EQ(exit_code(p, 60s), 64) << cli.output(name);
        const auto out = cli.output(name);
        EXPECT_TRUE(out.starts_with("zklock bench: ")) << out;
        EXPECT_EQ(out.find('\n'), out.size() - 1) << "not one line: " << out;
    }
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "a server was started";
    EXPECT_FALSE(std::filesystem::exists(cli.file("report")));
}

class CliBenchBusyTest : public CliTest {};

TEST_F(CliBenchBusyTest, RowsSayHowManySpunAndNoneIsLeftAfterTheRun) {
    Cli cli;
    auto p = cli.start({"bench", "uncontended", "-c", server_->connect_string(), "--ops", "5", "--warmup", "0",
                        "--no-floor", "--busy", "1", "--json"},
                       "bench");
    ASSERT_EQ(exit_code(p, 120s), 0) << cli.output("bench");
    const auto j = last_json_line(cli.output("bench"));
    ASSERT_TRUE(j.is_object()) << cli.output("bench");
    EXPECT_EQ(j.at("busy"), 1) << j.dump();
    EXPECT_EQ(j.at("server"), "standalone") << j.dump();  // -c's one server, asked with srvr
    EXPECT_EQ(j.at("ensemble"), 1) << j.dump();
    EXPECT_FALSE(busy_process_running(p.pid()));
}

TEST(CliBenchBusyInterruptTest, ASignalThatEndsTheBenchEndsItsBusyProcessesAndServer) {
    Cli cli;
    const auto tmp = cli.file("tmp");
    std::filesystem::create_directories(tmp);
    auto p = cli.start({"bench", "uncontended", "--ops", "10000000", "--warmup", "0", "--no-floor", "--busy", "1"},
                       "bench", {{"TMPDIR", tmp.string()}});
    ASSERT_TRUE(eventually([&] { return busy_process_running(p.pid()); }, 120s)) << cli.output("bench");
    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), -SIGTERM) << cli.output("bench");
    EXPECT_TRUE(eventually([&] { return !busy_process_running(p.pid()); }, 10s)) << "a busy process outlived the bench";
    EXPECT_TRUE(eventually([&] { return !quorum_peer_running_with(tmp.string()); }, 10s))
        << "the bench's server outlived it";
}

}  // namespace
