// `zklock run --repeat N PATH -- CMD`: CMD run N times, each holding PATH, the
// turns joined by one-transaction requeues: ZKLOCK_TURN, one transaction per
// turn (the fencing tokens), two looping processes alternating strictly, a
// loss mid-loop, bad input.
#include "test_cli_support.hpp"

#include <zklock/testing/faults.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace zklock;
using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

class CliRepeatTest : public CliTest {};

TEST_F(CliRepeatTest, RunsTheCommandNTimesEachTurnOneTransaction) {
    const auto path = lock_path();
    const auto turns = cli_.file("turns");
    auto p = cli_.start(plus(run_args(path, {"--repeat", "3"}),
                             {"sh", "-c", "echo \"$ZKLOCK_TURN $ZKLOCK_FENCING_TOKEN\" >> \"$0\"", turns.string()}));
    ASSERT_EQ(exit_code(p), 0) << cli_.output();
    const auto lines = complete_lines(turns);
    ASSERT_EQ(lines.size(), 3u) << cli_.output();
    std::vector<std::int64_t> tokens;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::istringstream in(lines[i]);
        std::size_t turn = 0;
        std::int64_t token = 0;
        ASSERT_TRUE(in >> turn >> token) << lines[i];
        EXPECT_EQ(turn, i + 1);
        tokens.push_back(token);
    }
    // A token is its node's czxid: with nobody else on the server, the one
    // transaction between two grants is the requeue.
    EXPECT_EQ(tokens[1] - tokens[0], 1) << "a turn is not one transaction";
    EXPECT_EQ(tokens[2] - tokens[1], 1) << "a turn is not one transaction";
    EXPECT_EQ(queue_length(path), 0u);
}

TEST_F(CliRepeatTest, TwoLoopingProcessesAlternateStrictly) {
    const auto path = lock_path();
    const auto log = cli_.file("log");
    const auto gate = cli_.file("gate");
    ASSERT_EQ(::mkfifo(gate.c_str(), 0600), 0);
    // A's first turn waits for the gate, so that B is queued behind it first.
    auto a = cli_.start(plus(run_args(path, {"--repeat", "3"}),
                             {"sh", "-c",
                              "echo \"A $ZKLOCK_TURN\" >> \"$0\"; "
                              "if [ \"$ZKLOCK_TURN\" = 1 ]; then read x < \"$1\"; fi",
                              log.string(), gate.string()}),
                        "a");
    ASSERT_TRUE(wait_until([&] { return complete_lines(log).size() == 1; }, 30s)) << cli_.output("a");
    auto b = cli_.start(
        plus(run_args(path, {"--repeat", "3"}), {"sh", "-c", "echo \"B $ZKLOCK_TURN\" >> \"$0\"", log.string()}), "b");
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; }, 30s)) << cli_.output("b");
    {
        std::ofstream open_gate(gate);
        open_gate << "go" << std::endl;
    }
    EXPECT_EQ(exit_code(a), 0) << cli_.output("a");
    EXPECT_EQ(exit_code(b), 0) << cli_.output("b");
    EXPECT_EQ(complete_lines(log), (std::vector<std::string>{"A 1", "B 1", "A 2", "B 2", "A 3", "B 3"}));
    EXPECT_EQ(queue_length(path), 0u);
}

TEST_F(CliRepeatTest, ALossMidLoopStopsTheCommandAndExits76) {
    const auto path = lock_path();
    const auto turns = cli_.file("turns");
    const auto node_file = cli_.file("node");
    auto p = cli_.start(plus(run_args(path, {"--repeat", "0"}),
                             {"sh", "-c",
                              "echo $ZKLOCK_TURN >> \"$0\"; if [ \"$ZKLOCK_TURN\" = 2 ]; then echo $ZKLOCK_LOCK_NODE > "
                              "\"$1\"; exec sleep 1000; fi",
                              turns.string(), node_file.string()}));
    const auto node = wait_for_line(node_file);
    auto s = connect();
    zklock::testing::delete_node(*s, node);
    EXPECT_EQ(exit_code(p), 76) << cli_.output();
    EXPECT_TRUE(contains(cli_.output(), "lock lost")) << cli_.output();
    EXPECT_EQ(complete_lines(turns), (std::vector<std::string>{"1", "2"}));
    EXPECT_EQ(queue_length(path), 0u);
}

TEST_F(CliRepeatTest, BadRepeatsAreRefused) {
    const auto path = lock_path();
    auto negative = cli_.start(plus(run_args(path, {"--repeat", "-1"}), {"true"}), "negative");
    EXPECT_EQ(exit_code(negative), 64) << cli_.output("negative");
    EXPECT_TRUE(contains(cli_.output("negative"), "--repeat: must be a whole number, 0 (until stopped) or more"))
        << cli_.output("negative");
    // Past long long's range: refused, not saturated to "almost forever".
    auto huge = cli_.start(plus(run_args(path, {"--repeat", "99999999999999999999"}), {"true"}), "huge");
    EXPECT_EQ(exit_code(huge), 64) << cli_.output("huge");
    EXPECT_TRUE(contains(cli_.output("huge"), "--repeat: must be a whole number")) << cli_.output("huge");
    auto set = cli_.start({"run", "-c", server_->connect_string(), "--repeat", "2", path, path + "-2", "--", "true"},
                          "set");
    EXPECT_EQ(exit_code(set), 64) << cli_.output("set");
    EXPECT_TRUE(contains(cli_.output("set"), "--repeat")) << cli_.output("set");
}

} // namespace
