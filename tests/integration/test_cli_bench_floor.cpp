// zklock bench's floors: the C client's leanest lock cycle and leanest handoff
// run beside the mutex scenarios, and zklock's figures carry their ratio to
// them; every row says what the server did for it; --one-thread; --requeue's
// rows beside the plain ones, --rounds and Curator's warm-up.
#include "json_output.hpp"
#include "test_cli_support.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
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

class CliBenchRoundsTest : public CliTest {};

// --requeue: zklock's workers taking turns with requeue() and the floor doing
// the same commit fewer than two transactions per turn, where the plain rows
// and Curator commit two or more (the server's Zxid read around each row's
// measured part); --rounds 2: each client twice in turn, each row saying its
// round, then the median of each; --curator-warmup: Curator's unmeasured
// acquisitions, contended ones contended, before its measured ones.
TEST_F(CliBenchRoundsTest, RequeueRowsRoundsAndCuratorsWarmUp) {
    Cli cli;
    constexpr int ops = 20, curator_warmup = 30;
    auto p = cli.start({"bench", "all", "-c", server_->connect_string(), "--clients", "3", "--ops", std::to_string(ops),
                        "--warmup", "0", "--requeue", "--rounds", "2", "--curator", "--curator-warmup",
                        std::to_string(curator_warmup), "--json"},
                       "bench", {{"XDG_CACHE_HOME", cli.dir().string()}});
    ASSERT_EQ(exit_code(p, 300s), 0) << cli.output("bench");
    const auto out = cli.output("bench");
    const auto rows = zklock::test::json_lines(out);
    // Per scenario: two rounds of the floor, zklock, the requeue floor, zklock's requeue and Curator; five medians.
    ASSERT_EQ(rows.size(), 30u) << out;
    const auto kind = [](const nlohmann::json& r) {
        return r.value("backend", std::string()) + (r.value("requeue", false) ? " requeue" : "");
    };
    const std::vector<std::string> kinds = {"c-client floor", "zookeeper", "c-client floor requeue", "zookeeper requeue",
                                            "curator"};
    for (std::size_t s = 0; s < 2; ++s) {
        const auto scenario = s == 0 ? "uncontended" : "contended";
        const auto at = [&](std::size_t round, std::size_t k) -> const nlohmann::json& {
            return rows[s * 15 + round * 5 + k];
        };
        for (std::size_t round = 0; round < 3; ++round)
            for (std::size_t k = 0; k < kinds.size(); ++k) {
                const auto& r = at(round, k);
                EXPECT_EQ(r.at("scenario"), scenario) << r.dump();
                EXPECT_EQ(kind(r), kinds[k]) << r.dump();
                EXPECT_EQ(r.at("round"), round < 2 ? nlohmann::json(round + 1) : nlohmann::json("median")) << r.dump();
            }
        for (std::size_t round = 0; round < 2; ++round) {
            // What the server committed for each row's measured turns alone.
            for (std::size_t k = 0; k < kinds.size(); ++k) {
                const auto& r = at(round, k);
                ASSERT_TRUE(r.at("measured_transactions").is_number()) << r.dump();
                const auto txns = r.at("measured_transactions").get<int>();
                EXPECT_EQ(r.at("ops"), ops) << r.dump();
                EXPECT_DOUBLE_EQ(r.at("transactions_per_turn").get<double>(), static_cast<double>(txns) / ops)
                    << r.dump();
                // Contended, each of the clients may have its next create
                // committed before the measured part begins (queued during
                // the warm-up) or after it ends: the count is exact to
                // within one transaction a client.
                const int slack = s == 0 ? 0 : r.at("clients").get<int>();
                if (kinds[k].ends_with("requeue")) {
                    EXPECT_GE(txns, ops - slack) << r.dump();
                    EXPECT_LT(txns, 2 * ops - slack) << r.dump();
                } else {
                    EXPECT_GE(txns, 2 * ops - slack) << r.dump();
                }
            }
            // Rates over the floor's of the same round: the requeue row's over the requeue floor's.
            for (const auto& [k, floor] : {std::pair<std::size_t, std::size_t>{1, 0}, {3, 2}, {4, 0}})
                EXPECT_DOUBLE_EQ(at(round, k).at("ops_per_s_vs_floor").get<double>(),
                                 at(round, k).at("ops_per_s").get<double>() / at(round, floor).at("ops_per_s").get<double>())
                    << at(round, k).dump();
            EXPECT_DOUBLE_EQ(at(round, 3).at("ops_per_s_vs_curator").get<double>(),
                             at(round, 3).at("ops_per_s").get<double>() / at(round, 4).at("ops_per_s").get<double>());
            // Curator's warm-up ran in its row: its server work holds two transactions per cycle of it too.
            const auto& curator = at(round, 4);
            EXPECT_EQ(curator.at("warmup"), curator_warmup) << curator.dump();
            EXPECT_GE(curator.at("server_work").at("transactions").get<int>(), 2 * (curator_warmup + ops))
                << curator.dump();
        }
        // The medians: of two rounds, the mean of both.
        for (std::size_t k = 0; k < kinds.size(); ++k) {
            const auto& m = at(2, k);
            EXPECT_EQ(m.at("rounds"), 2) << m.dump();
            for (const char* field : {"ops_per_s", "p50_us"})
                EXPECT_DOUBLE_EQ(m.at(field).get<double>(),
                                 (at(0, k).at(field).get<double>() + at(1, k).at(field).get<double>()) / 2)
                    << field << ": " << m.dump();
        }
    }
}
