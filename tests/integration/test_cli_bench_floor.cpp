// zklock bench's floors: the C client's leanest lock cycle and leanest handoff
// run beside the mutex scenarios, and zklock's figures carry their ratio to
// them; every row says what the server did for it; --one-thread.
#include "json_output.hpp"
#include "test_cli_support.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

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
    // What the server did for each row: at least the row's own cycles (two transactions each).
    for (const auto* row : {&floor, &zk}) {
        ASSERT_TRUE((*row)["server_work"].is_object()) << row->dump();
        EXPECT_GE((*row)["server_work"]["transactions"].get<int>(), 40) << row->dump();
        EXPECT_GT((*row)["server_work"]["requests_per_transaction"].get<double>(), 0) << row->dump();
        // What the scheduler did for the loop's own threads, per cycle: they ran, each cycle woke them.
        const auto per_cycle = [&](const char* key) { return row->value(key, nlohmann::json()); };
        ASSERT_TRUE(per_cycle("client_cpu_us_per_cycle").is_number()) << row->dump();
        EXPECT_GT(per_cycle("client_cpu_us_per_cycle").get<double>(), 0) << row->dump();
        ASSERT_TRUE(per_cycle("client_wait_us_per_cycle").is_number()) << row->dump();
        EXPECT_GE(per_cycle("client_wait_us_per_cycle").get<double>(), 0) << row->dump();
        ASSERT_TRUE(per_cycle("client_runs_per_cycle").is_number()) << row->dump();
        EXPECT_GE(per_cycle("client_runs_per_cycle").get<double>(), 1) << row->dump();
    }
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
    EXPECT_FALSE(hzk.contains("floor_release")) << hzk.dump();
    EXPECT_FALSE(hzk.contains("floor_requeue")) << hzk.dump();
    // The floor's one thread, per grant; zklock's clients (a thread each, begun and ended within the run) not.
    EXPECT_GT(hfloor.value("client_cpu_us_per_cycle", 0.0), 0) << hfloor.dump();
    EXPECT_GE(hfloor.value("client_runs_per_cycle", 0.0), 1) << hfloor.dump();
    EXPECT_FALSE(hzk.contains("client_cpu_us_per_cycle")) << hzk.dump();

    // --floor-release-proof: the floor's waiters hold on their predecessor's
    // `.released` sibling's creation alone (the node's own events are
    // ignored), so the run ends only if each release proves itself.
    auto proof = cli.start({"bench", "contended", "--clients", "3", "--ops", "20", "--warmup", "0", "--json",
                            "--floor-release-proof"},
                           "proof");
    ASSERT_EQ(exit_code(proof, 300s), 0) << cli.output("proof");
    const auto proof_lines = json_lines(cli.output("proof"));
    ASSERT_EQ(proof_lines.size(), 2u) << cli.output("proof");
    EXPECT_EQ(proof_lines[0]["backend"], "c-client floor");
    EXPECT_NE(proof_lines[0]["measures"].get<std::string>().find(".released sibling"), std::string::npos)
        << proof_lines[0].dump();
    EXPECT_EQ(proof_lines[0]["ops"], 20);
    EXPECT_EQ(proof_lines[1]["floor_release"], "proof") << proof_lines[1].dump();
    EXPECT_FALSE(proof_lines[1].contains("floor_requeue")) << proof_lines[1].dump();

    // --floor-requeue: the floors put each release and the next create in one
    // transaction, so the server commits fewer than two per cycle; with and
    // without the release's proof (the contended floor's two kinds of release).
    for (const bool with_proof : {false, true}) {
        std::vector<std::string> args{"bench", "--scenario", "all", "--clients", "3", "--ops", "20",
                                      "--warmup", "0", "--json", "--floor-requeue"};
        if (with_proof) args.emplace_back("--floor-release-proof");
        const std::string name = with_proof ? "requeue-proof" : "requeue";
        auto requeue = cli.start(args, name);
        ASSERT_EQ(exit_code(requeue, 300s), 0) << cli.output(name);
        const auto lines = json_lines(cli.output(name));
        ASSERT_EQ(lines.size(), 4u) << cli.output(name);
        for (const auto* row : {&lines[0], &lines[2]}) {
            EXPECT_EQ((*row)["backend"], "c-client floor");
            EXPECT_EQ((*row)["ops"], 20);
            EXPECT_NE((*row)["measures"].get<std::string>().find("the next create"), std::string::npos)
                << row->dump();
            ASSERT_TRUE((*row)["server_work"].is_object()) << row->dump();
            EXPECT_GE((*row)["server_work"]["transactions"].get<int>(), 20) << row->dump();
            EXPECT_LT((*row)["server_work"]["transactions"].get<int>(), 40) << row->dump();
        }
        EXPECT_EQ(lines[2]["scenario"], "contended");
        EXPECT_EQ(lines[2]["measures"].get<std::string>().find(".released sibling") != std::string::npos, with_proof)
            << lines[2].dump();
        EXPECT_EQ(lines[3].contains("floor_release"), with_proof) << lines[3].dump();
        for (const auto* row : {&lines[1], &lines[3]})
            EXPECT_TRUE(row->value("floor_requeue", false)) << row->dump();
    }
}

// With --one-thread the contended clients share one thread; --no-floor leaves
// the floors out of both scenarios.
TEST(CliBenchFloorTest, NoFloorLeavesItOutAndOneThreadRunsTheContendedClientsOnOne) {
    Cli cli;
    auto p = cli.start({"bench", "--scenario", "all", "--clients", "3", "--ops", "20", "--warmup", "0", "--json",
                        "--no-floor", "--one-thread"},
                       "bench");
    ASSERT_EQ(exit_code(p, 300s), 0) << cli.output("bench");
    const auto lines = json_lines(cli.output("bench"));
    ASSERT_EQ(lines.size(), 2u) << cli.output("bench");
    for (const auto& line : lines) {
        EXPECT_EQ(line["backend"], "zookeeper");
        EXPECT_FALSE(line.contains("p50_vs_floor")) << line.dump();
        EXPECT_FALSE(line.contains("handoff_p50_vs_floor")) << line.dump();
    }
    EXPECT_FALSE(lines[0].contains("one_thread")) << lines[0].dump();
    EXPECT_EQ(lines[1]["scenario"], "contended");
    EXPECT_TRUE(lines[1].value("one_thread", false)) << lines[1].dump();
    EXPECT_EQ(lines[1]["ops"], 20);
    EXPECT_EQ(lines[1]["clients"], 3);
    EXPECT_GT(lines[1]["handoff_p50_us"].get<double>(), 0) << lines[1].dump();
    // Its threads (the executor's, the caller's) live through the run: what the scheduler did for them, per grant.
    EXPECT_GT(lines[1].value("client_cpu_us_per_cycle", 0.0), 0) << lines[1].dump();
    EXPECT_GE(lines[1].value("client_runs_per_cycle", 0.0), 1) << lines[1].dump();
    // Only the contended mutex scenario runs on one thread.
    auto refused = cli.start({"bench", "--scenario", "uncontended", "--one-thread"}, "refused");
    EXPECT_EQ(exit_code(refused, 60s), 64) << cli.output("refused");
    EXPECT_NE(cli.output("refused").find("--one-thread runs the contended mutex scenario"), std::string::npos)
        << cli.output("refused");
}
