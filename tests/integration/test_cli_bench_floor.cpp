// zklock bench's floors: the C client's leanest lock cycle and leanest handoff
// run beside the mutex scenarios, and zklock's figures carry their ratio to them.
#include "json_output.hpp"
#include "test_cli_support.hpp"

#include <nlohmann/json.hpp>

using namespace zklock::test;
using namespace zklock::test::cli;

TEST(CliBenchFloorTest, TheFloorsRunBesideTheMutexScenariosAndGiveZklocksRatioToThem) {
    Cli cli;
    auto p = cli.start({"bench", "--scenario", "all", "--clients", "3", "--ops", "20", "--warmup", "0", "--json"},
                       "bench");
    ASSERT_EQ(exit_code(p, 300s), 0) << cli.output("bench");
    const auto lines = json_lines(cli.output("bench"));
    ASSERT_EQ(lines.size(), 4u) << cli.output("bench");
    // Uncontended: the floor's cycle, then zklock's with its ratios.
    const auto& floor = lines[0];
    const auto& zk = lines[1];
    EXPECT_EQ(floor["backend"], "c-client floor");
    EXPECT_EQ(floor["scenario"], "uncontended");
    EXPECT_EQ(floor["ops"], 20);
    EXPECT_EQ(floor["attempts_per_grant"], 1.0);
    EXPECT_EQ(zk["backend"], "zookeeper");
    ASSERT_TRUE(zk.contains("p50_vs_floor")) << zk.dump();
    EXPECT_DOUBLE_EQ(zk["floor_p50_us"].get<double>(), floor["p50_us"].get<double>());
    EXPECT_DOUBLE_EQ(zk["p50_vs_floor"].get<double>(), zk["p50_us"].get<double>() / floor["p50_us"].get<double>());
    EXPECT_DOUBLE_EQ(zk["ops_per_s_vs_floor"].get<double>(),
                     zk["ops_per_s"].get<double>() / floor["ops_per_s"].get<double>());
    // Contended: the lean handoff of the same clients on one lock, then zklock's.
    const auto& hfloor = lines[2];
    const auto& hzk = lines[3];
    EXPECT_EQ(hfloor["backend"], "c-client floor");
    EXPECT_EQ(hfloor["scenario"], "contended");
    EXPECT_EQ(hfloor["clients"], 3);
    EXPECT_EQ(hfloor["ops"], 20);
    EXPECT_GT(hfloor["handoff_p50_us"].get<double>(), 0) << hfloor.dump();
    EXPECT_EQ(hzk["backend"], "zookeeper");
    EXPECT_EQ(hzk["scenario"], "contended");
    EXPECT_GT(hzk["handoff_p50_us"].get<double>(), 0) << hzk.dump();
    EXPECT_DOUBLE_EQ(hzk["handoff_p50_vs_floor"].get<double>(),
                     hzk["handoff_p50_us"].get<double>() / hfloor["handoff_p50_us"].get<double>());
    EXPECT_DOUBLE_EQ(hzk["ops_per_s_vs_floor"].get<double>(),
                     hzk["ops_per_s"].get<double>() / hfloor["ops_per_s"].get<double>());
}

TEST(CliBenchFloorTest, NoFloorLeavesItOut) {
    Cli cli;
    auto p = cli.start({"bench", "--scenario", "uncontended", "--ops", "20", "--warmup", "0", "--json", "--no-floor"},
                       "bench");
    ASSERT_EQ(exit_code(p, 300s), 0) << cli.output("bench");
    const auto lines = json_lines(cli.output("bench"));
    ASSERT_EQ(lines.size(), 1u) << cli.output("bench");
    EXPECT_EQ(lines[0]["backend"], "zookeeper");
    EXPECT_FALSE(lines[0].contains("p50_vs_floor"));
}
