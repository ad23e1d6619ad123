// zklock bench on an ensemble, the pure parts: which options go with
// --ensemble and --busy, which servers of -c the clients run on (from their
// srvr answers), the servers' zoo.cfg settings, what the servers did for a
// row (mntr and srvr), the peers report's name, its ratios and its Markdown.
#include "ensemble/plan.hpp"
#include "ensemble/server_work.hpp"
#include "report/peers.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

using namespace zklock::cli;
using nlohmann::json;

namespace {

ensemble_request on_ensemble(int n, std::string scenario = "all") {
    ensemble_request r;
    r.ensemble = n;
    r.scenario = std::move(scenario);
    return r;
}

bool refused_saying(const ensemble_request& r, const std::string& part) {
    const auto why = ensemble_refusal(r);
    return why && why->find(part) != std::string::npos && why->find('\n') == std::string::npos;
}

} // namespace

// --- ensemble_refusal -------------------------------------------------------------

TEST(EnsembleRefusal, TakesOneThreeOrFiveServersForTheMutexScenarios) {
    for (int n : {1, 3, 5})
        for (const char* s : {"uncontended", "contended", "all"}) EXPECT_EQ(ensemble_refusal(on_ensemble(n, s)), std::nullopt) << n << " " << s;
    for (int n : {0, 2, 4, 6, -1, 7}) EXPECT_TRUE(refused_saying(on_ensemble(n), "not " + std::to_string(n))) << n;
    EXPECT_EQ(ensemble_refusal(ensemble_request{}), std::nullopt);  // neither given
}

TEST(EnsembleRefusal, RefusesWhatRunsOnOtherServersOrOtherScenarios) {
    auto r = on_ensemble(3);
    r.connect = true;
    EXPECT_TRUE(refused_saying(r, "not with -c"));
    r = on_ensemble(3);
    r.backend = true;
    EXPECT_TRUE(refused_saying(r, "not with --backend"));
    r = on_ensemble(3);
    r.safety = true;
    EXPECT_TRUE(refused_saying(r, "not with --safety"));
    for (const char* s : {"separate", "mixed", "waiters", "locks", "multi"})
        EXPECT_TRUE(refused_saying(on_ensemble(3, s), std::string("not --scenario ") + s)) << s;
    r = on_ensemble(3, "uncontended");
    r.recipe = "election";
    EXPECT_TRUE(refused_saying(r, "not --recipe election"));
    // --report with --ensemble is the peers report.
    r = on_ensemble(5);
    r.report = true;
    EXPECT_EQ(ensemble_refusal(r), std::nullopt);
}

TEST(EnsembleRefusal, BusyTakesZeroToSixteenBesideTheMutexScenarios) {
    ensemble_request r;
    r.scenario = "contended";
    for (int k : {0, 1, 2, 16}) {
        r.busy = k;
        EXPECT_EQ(ensemble_refusal(r), std::nullopt) << k;
        r.connect = true;  // with the user's servers too
        EXPECT_EQ(ensemble_refusal(r), std::nullopt) << k;
        r.connect = false;
    }
    for (int k : {-1, 17}) {
        r.busy = k;
        EXPECT_TRUE(refused_saying(r, "--busy takes 0 to 16")) << k;
    }
    r.busy = 2;
    r.backend = true;
    EXPECT_TRUE(refused_saying(r, "--busy"));
    r.backend = false;
    r.report = true;  // without --ensemble: the backends' report
    EXPECT_TRUE(refused_saying(r, "--report without --ensemble"));
    r.ensemble = 3;
    EXPECT_EQ(ensemble_refusal(r), std::nullopt);
    r = ensemble_request{};
    r.busy = 1;
    r.safety = true;
    EXPECT_TRUE(refused_saying(r, "not with --safety"));
    r.safety = false;
    r.scenario = "waiters";
    EXPECT_TRUE(refused_saying(r, "not --scenario waiters"));
    r.busy = 0;  // 0 is the default: nothing to refuse
    EXPECT_EQ(ensemble_refusal(r), std::nullopt);
}

// --- plan_serving_nodes -------------------------------------------------------------

TEST(PlanServingNodes, RunsOnTheFirstFollowerThenTheLeaderKeepingTheChroot) {
    const auto plan = plan_serving_nodes("a:1,b:2,c:3/app", {{"a:1", "leader", ""}, {"b:2", "follower", ""},
                                                              {"c:3", "follower", ""}});
    ASSERT_EQ(plan.nodes.size(), 2u);
    EXPECT_EQ(plan.nodes[0].role, "follower");
    EXPECT_EQ(plan.nodes[0].connect, "b:2/app");
    EXPECT_EQ(plan.nodes[0].ensemble, 3);
    EXPECT_EQ(plan.nodes[1].role, "leader");
    EXPECT_EQ(plan.nodes[1].connect, "a:1/app");
    EXPECT_EQ(plan.nodes[1].ensemble, 3);
    EXPECT_TRUE(plan.notes.empty());
}

TEST(PlanServingNodes, LeavesOutWhatDidNotAnswerAsAMember) {
    const auto plan = plan_serving_nodes(
        "a:1,b:2,c:3", {{"a:1", std::nullopt, "connection refused"}, {"b:2", "observer", ""}, {"c:3", "leader", ""}});
    ASSERT_EQ(plan.nodes.size(), 1u);
    EXPECT_EQ(plan.nodes[0].role, "leader");
    EXPECT_EQ(plan.nodes[0].connect, "c:3");
    ASSERT_EQ(plan.notes.size(), 3u);
    EXPECT_NE(plan.notes[0].find("a:1 gave no mode (connection refused): left out"), std::string::npos) << plan.notes[0];
    EXPECT_NE(plan.notes[1].find("b:2 is an observer"), std::string::npos) << plan.notes[1];
    EXPECT_NE(plan.notes[2].find("no server of -c is a follower"), std::string::npos) << plan.notes[2];
}

TEST(PlanServingNodes, RunsAgainstTheConnectStringAsGivenWhenNoServerTellsItsRole) {
    const std::string not_serving = "'This ZooKeeper instance is not currently serving requests'";
    const auto plan = plan_serving_nodes("a:1,b:2/app", {{"a:1", std::nullopt, not_serving}, {"b:2", std::nullopt, "no answer in time"}});
    ASSERT_EQ(plan.nodes.size(), 1u);
    EXPECT_EQ(plan.nodes[0].role, "as given");
    EXPECT_EQ(plan.nodes[0].connect, "a:1,b:2/app");
    EXPECT_EQ(plan.nodes[0].ensemble, std::nullopt);
    ASSERT_EQ(plan.notes.size(), 1u);
    EXPECT_NE(plan.notes[0].find(not_serving), std::string::npos) << plan.notes[0];
    EXPECT_NE(plan.notes[0].find("as given"), std::string::npos) << plan.notes[0];
}

TEST(PlanServingNodes, OneServerIsRunOnInItsRole) {
    auto plan = plan_serving_nodes("127.0.0.1:2181/x", {{"127.0.0.1:2181", "standalone", ""}});
    ASSERT_EQ(plan.nodes.size(), 1u);
    EXPECT_EQ(plan.nodes[0].role, "standalone");
    EXPECT_EQ(plan.nodes[0].connect, "127.0.0.1:2181/x");
    EXPECT_EQ(plan.nodes[0].ensemble, 1);
    EXPECT_TRUE(plan.notes.empty());
    plan = plan_serving_nodes("h:1", {{"h:1", "follower", ""}});
    ASSERT_EQ(plan.nodes.size(), 1u);
    EXPECT_EQ(plan.nodes[0].role, "follower");
    EXPECT_EQ(plan.nodes[0].ensemble, std::nullopt);  // one member named: its size is not known
    plan = plan_serving_nodes("h:1", {{"h:1", std::nullopt, "connection refused"}});
    EXPECT_EQ(plan.nodes.at(0).role, "as given");
    EXPECT_EQ(plan.notes.size(), 1u);
}

// --- the servers' settings and the report's name -------------------------------------------

TEST(ZooCfg, TheLastLineOfAKeyWinsAndOnlyForceSyncNoTurnsFsyncOff) {
    EXPECT_TRUE(fsync_on({}));
    EXPECT_TRUE(fsync_on({"forceSync=yes", "tickTime=100"}));
    EXPECT_FALSE(fsync_on({"forceSync=no"}));
    EXPECT_FALSE(fsync_on({" forceSync = no "}));
    EXPECT_TRUE(fsync_on({"forceSync=no", "forceSync=yes"}));
    EXPECT_TRUE(fsync_on({"forceSyncs=no"}));
    EXPECT_EQ(zoo_cfg_value({"tickTime=100", "tickTime=300"}, "tickTime"), "300");
    EXPECT_EQ(zoo_cfg_value({"tickTime"}, "tickTime"), std::nullopt);
}

TEST(ZooKeeperVersion, IsReadFromTheSrvrAnswer) {
    EXPECT_EQ(zookeeper_version("Zookeeper version: 3.8.0-debian--1, built on 2023-01-01 00:00 UTC\nLatency min/avg/max: 0/0.5/3\nMode: follower\n"),
              "3.8.0-debian--1");
    EXPECT_EQ(zookeeper_version("This ZooKeeper instance is not currently serving requests\n"), "");
}

TEST(PeersReportStem, NamesTheServersAndTheLoad) {
    EXPECT_EQ(peers_report_stem(1, 0), "peers-standalone");
    EXPECT_EQ(peers_report_stem(3, 0), "peers-ensemble-3");
    EXPECT_EQ(peers_report_stem(5, 2), "peers-ensemble-5-busy2");
    EXPECT_EQ(peers_report_stem(1, 16), "peers-standalone-busy16");
}

// --- the peers report ----------------------------------------------------------------------

namespace {

json row(const char* backend, const char* scenario, const char* server, double p50, double ops_per_s,
         std::optional<double> handoff = std::nullopt) {
    json r = {{"backend", backend}, {"scenario", scenario}, {"server", server}, {"ensemble", 3},
              {"busy", 0},          {"p50_us", p50},        {"p99_us", 2 * p50}, {"ops_per_s", ops_per_s}};
    if (handoff) r["handoff_p50_us"] = *handoff;
    return r;
}

json sample_rows() {
    return json::array({
        row("c-client floor", "uncontended", "follower", 500, 2000),
        row("zookeeper", "uncontended", "follower", 600, 1600),
        row("curator", "uncontended", "follower", 1500, 650),
        row("kazoo", "uncontended", "follower", 1200, 800),
        row("c-client floor", "contended", "follower", 4000, 2000, 300),
        row("zookeeper", "contended", "follower", 5000, 1800, 330),
        row("curator", "contended", "follower", 9000, 600),
        // The leader's pass: no kazoo row (it did not run).
        row("zookeeper", "uncontended", "leader", 400, 2400),
        row("curator", "uncontended", "leader", 1000, 900),
    });
}

} // namespace

TEST(PeerRatios, ComparePerScenarioAndServerInTheDirectionOfEachScenario) {
    const auto rows = with_peer_ratios(sample_rows());
    const auto& unc = rows[1];
    EXPECT_DOUBLE_EQ(unc.at("ratio_to_curator").get<double>(), 1500.0 / 600);  // the peer's p50 / zklock's
    EXPECT_DOUBLE_EQ(unc.at("ratio_to_kazoo").get<double>(), 1200.0 / 600);
    EXPECT_DOUBLE_EQ(unc.at("ratio_to_floor").get<double>(), 600.0 / 500);     // zklock's p50 / the floor's
    const auto& con = rows[5];
    EXPECT_DOUBLE_EQ(con.at("ratio_to_curator").get<double>(), 1800.0 / 600);  // zklock's acquisitions/s / the peer's
    EXPECT_TRUE(con.at("ratio_to_kazoo").is_null());
    EXPECT_DOUBLE_EQ(con.at("ratio_to_floor").get<double>(), 330.0 / 300);     // the handoffs' p50s
    const auto& leader = rows[7];
    EXPECT_DOUBLE_EQ(leader.at("ratio_to_curator").get<double>(), 1000.0 / 400);  // the leader's Curator, not the follower's
    EXPECT_TRUE(leader.at("ratio_to_kazoo").is_null());
    EXPECT_TRUE(leader.at("ratio_to_floor").is_null());
    EXPECT_FALSE(rows[2].contains("ratio_to_curator"));  // only zklock's rows
}

TEST(PeersMarkdown, SaysHowItWasRunAndGivesARowPerClientPerServer) {
    json report = {{"command", "zklock bench all --ensemble 3 --curator --kazoo --report out"},
                   {"date", "2024-05-01T12:00:00Z"},
                   {"machine", {{"cpu", "AMD EPYC"}, {"cpus", 2}, {"memory_gib", 24}, {"kernel", "Linux 6.1"}}},
                   {"servers",
                    {{"ensemble", 3},
                     {"version", "3.8.0"},
                     {"fsync", true},
                     {"tick_time_ms", 200},
                     {"max_session_timeout_ms", 20000},
                     {"config", json::array()},
                     {"served", {"follower", "leader"}}}},
                   {"busy", 2},
                   {"clients", 8},
                   {"ops", 2000},
                   {"warmup", 20000},
                   {"results", with_peer_ratios(sample_rows())}};
    for (auto& r : report["results"]) {
        if (r["backend"] == "curator" && r["server"] == "follower" && r["scenario"] == "uncontended")
            r["server_work"] = {{"transactions", 4400}, {"requests_per_transaction", 2.5},
                                {"transactions_per_fsync", 1.1}, {"leader_transactions_per_fsync", 2.0}};
        if (r["backend"] == "zookeeper" && r["server"] == "leader") {
            r["client_cpu_us_per_cycle"] = 66.8;
            r["client_wait_us_per_cycle"] = 32.4;
        }
        // The floor says what it did (here as with --floor-requeue); the contended one does not.
        if (r["backend"] == "c-client floor" && r["scenario"] == "uncontended")
            r["measures"] = "one transaction (delete, the next create) + getChildren pipelined, one round trip";
    }
    const auto md = peers_markdown(report);
    EXPECT_NE(md.find("the C client floor's (one transaction (delete, the next create) + getChildren pipelined, one "
                      "round trip; 1: at the floor)"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("the C client floor's (each waiter holding on its predecessor's deletion; 1: at the floor)"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| 2.50 | 1.10 (2.00) |\n"), std::string::npos) << md;
    // The bench's own threads per cycle, uncontended only: its table has the column, the contended one not.
    EXPECT_NE(md.find("| leader | zklock | 400 | 800 | 2400 | 2.50x | - | - | - | 67, 32 | - | - | - |\n"), std::string::npos) << md;
    EXPECT_NE(md.find("| follower | Curator | 1500 | 3000 | 650 |  |  |  | - |  | - | 2.50 |"), std::string::npos) << md;
    EXPECT_EQ(md.find("| 5000 | 10000 | 1800 | 330 | 3.00x | - | 1.10x |  |"), std::string::npos) << md;
    EXPECT_NE(md.find("txns/fsync (leader)"), std::string::npos) << md;
    for (const char* part :
         {"3-node ZooKeeper ensemble", "`zklock bench all --ensemble 3 --curator --kazoo --report out`",
          "2024-05-01T12:00:00Z", "AMD EPYC", "ZooKeeper 3.8.0", "fsync on", "tickTime 200 ms", "first a follower",
          "2 CPU-bound processes (`--busy 2`)", "## Uncontended", "## Contended: 8 clients on one lock",
          "| follower | zklock | 600 | 1200 | 1600 | 2.50x | 2.00x | 1.20x |",
          "| follower | C client floor | 500 | 1000 | 2000 |  |  |  |", "| follower | Curator | 1500 |",
          "| follower | zklock | 5000 | 10000 | 1800 | 330 | 3.00x | - | 1.10x |", "| leader | zklock | 400 | 800 | 2400 | 2.50x | - | - |"})
        EXPECT_NE(md.find(part), std::string::npos) << part << "\n" << md;
    EXPECT_EQ(md.find("| leader | kazoo"), std::string::npos) << md;

    report["servers"]["ensemble"] = 1;
    report["servers"]["fsync"] = false;
    report["servers"]["config"] = {"forceSync=no"};
    report["busy"] = 0;
    const auto standalone = peers_markdown(report);
    for (const char* part : {"a standalone ZooKeeper server", "fsync off", "`forceSync=no`", "no `--busy` processes"})
        EXPECT_NE(standalone.find(part), std::string::npos) << part << "\n" << standalone;
}

// --- server_work --------------------------------------------------------------------

TEST(ServerWork, CountersAreReadFromMntrAndSrvr) {
    const std::string mntr = "zk_version\t3.8.0\nzk_packets_received\t1200\nzk_avg_fsynctime\t0.5\n"
                             "zk_cnt_fsynctime\t300\nzk_cnt_fsynctime_x\t7\n";
    const std::string srvr = "Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.4/9\nZxid: 0x20000012c\nMode: leader\n";
    const auto c = parse_server_counters(mntr, srvr);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->requests, 1200);
    EXPECT_EQ(c->fsyncs, 300);
    EXPECT_EQ(c->zxid, 0x20000012cLL);
    // A counter or the Zxid missing (an older server, another answer): nothing.
    EXPECT_FALSE(parse_server_counters("zk_packets_received\t1\n", srvr));
    EXPECT_FALSE(parse_server_counters(mntr, "Mode: leader\n"));
    EXPECT_FALSE(parse_server_counters("zk_packets_received\tmany\nzk_cnt_fsynctime\t3\n", srvr));
}

TEST(ServerWork, IsPerTransactionAndNullWithoutOneOrAcrossALeadersEpoch) {
    const server_counters before{1000, 100, (2LL << 32) + 10};
    const server_counters after{1300, 150, (2LL << 32) + 210};
    const auto w = work_between(before, after);
    EXPECT_EQ(w["transactions"], 200);
    EXPECT_DOUBLE_EQ(w["requests_per_transaction"].get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(w["transactions_per_fsync"].get<double>(), 4.0);
    EXPECT_FALSE(w.contains("leader_transactions_per_fsync"));
    // The leader's own fsyncs, when the clients were on a follower.
    const auto on_follower = work_between(before, after, server_counters{0, 10, 0}, server_counters{0, 110, 0});
    EXPECT_DOUBLE_EQ(on_follower["leader_transactions_per_fsync"].get<double>(), 2.0);
    // No fsync counted: no ratio.
    EXPECT_TRUE(work_between(before, server_counters{1300, 100, after.zxid})["transactions_per_fsync"].is_null());
    EXPECT_TRUE(work_between(before, before).is_null());
    EXPECT_TRUE(work_between(before, server_counters{1300, 150, (3LL << 32) + 5}).is_null());  // a new leader
}
