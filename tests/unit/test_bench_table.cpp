// zklock bench's plain output (lab/runs/table.cpp): the rows
// that --json prints, as one compact table with each row's rate over the
// floor's and zklock's over each peer's, and the rows without a latency as
// wrapped lines; and the comparisons within a run it uses
// (lab/runs/rounds.cpp): the rate ratios, the rounds' medians.
#include "runs/rounds.hpp"
#include "runs/table.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace zklock::cli {
namespace {

using nlohmann::json;

const std::set<std::string> fifo = {"zookeeper", "c-client floor", "curator", "kazoo"};

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The words of `line`, split at spaces.
std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

// The line of `text` whose first two words are `scenario` and `backend`, or "".
std::string row_line(const std::string& text, const std::string& scenario, const std::string& backend) {
    for (const auto& line : lines_of(text)) {
        const auto w = words_of(line);
        if (w.size() >= 2 && w[0] == scenario && w[1] == backend) return line;
    }
    return "";
}

// A row as runs/mutex.cpp emits it: the server's tags, a nested object.
json row(const std::string& backend, const std::string& scenario, int clients, double ops_per_s, double p50,
         double p99) {
    return {{"backend", backend},
            {"scenario", scenario},
            {"clients", clients},
            {"ops", 2000},
            {"p50_us", p50},
            {"p99_us", p99},
            {"mean_us", p50},
            {"ops_per_s", ops_per_s},
            {"wall_s", 1.5},
            {"server", "standalone"},
            {"ensemble", nullptr},
            {"busy", 0},
            {"server_work", {{"commits", 4000}, {"fsyncs", 4000}}},
            {"measures", "delete + create + getChildren pipelined, one round trip: the least a lock cycle costs"}};
}

TEST(BenchTable, OneLinePerRowUnderTheWidthWithoutNestedJson) {
    auto zk = row("zookeeper", "contended", 8, 1500, 5000, 9000);
    zk["handoff_p50_us"] = 640.0;
    zk["out_of_order_grants"] = 0;
    const std::vector<json> rows = {row("c-client floor", "contended", 8, 2000, 4000, 7000), zk,
                                    row("curator", "contended", 8, 600, 12000, 30000)};
    const auto text = format_table(rows, fifo);
    const auto lines = lines_of(text);
    // A header of two lines, a line per row, the ratios' footnotes (the floor's, the peers').
    ASSERT_EQ(lines.size(), 7u) << text;
    EXPECT_EQ(words_of(lines[1]).front(), "scenario") << text;
    for (const auto& header : {lines[0], lines[1]})  // one standalone server: nothing to tell apart
        EXPECT_EQ(header.find("server"), std::string::npos) << text;
    for (const auto& line : lines) EXPECT_LE(line.size(), bench_table_width) << line;
    EXPECT_EQ(text.find('{'), std::string::npos) << text;
    EXPECT_EQ(text.find("commits"), std::string::npos) << text;
    EXPECT_EQ(text.find("pipelined"), std::string::npos) << text;
    const auto w = words_of(row_line(text, "contended", "zookeeper"));
    // scenario backend clients ops/s p50 p99 handoff out-of-order vs-floor vs-curator
    ASSERT_EQ(w.size(), 10u) << text;
    EXPECT_EQ(w[2], "8");
    EXPECT_EQ(w[3], "1500");
    EXPECT_EQ(w[4], "5000");
    EXPECT_EQ(w[5], "9000");
    EXPECT_EQ(w[6], "640");
    EXPECT_EQ(w[7], "0");
}

TEST(BenchTable, ZklocksRowGivesItsRateOverTheFloorsAndEachPeersOfTheSameRun) {
    const std::vector<json> rows = {
        row("c-client floor", "uncontended", 1, 1000, 900, 1500), row("zookeeper", "uncontended", 1, 800, 1100, 2000),
        row("curator", "uncontended", 1, 400, 2300, 5000),        row("kazoo", "uncontended", 1, 200, 4500, 9000),
        // Another scenario's floor: not zklock's uncontended row's.
        row("c-client floor", "contended", 8, 100, 1, 1)};
    const auto text = format_table(rows, fifo);
    EXPECT_TRUE(lines_of(text).at(0).ends_with("vs       vs     vs")) << text;
    EXPECT_TRUE(lines_of(text).at(1).ends_with("floor  curator  kazoo")) << text;
    const auto zk = words_of(row_line(text, "uncontended", "zookeeper"));
    ASSERT_GE(zk.size(), 3u) << text;
    EXPECT_EQ(zk[zk.size() - 3], "0.80x") << text;  // 800 / 1000
    EXPECT_EQ(zk[zk.size() - 2], "2.00x") << text;  // 800 / 400
    EXPECT_EQ(zk[zk.size() - 1], "4.00x") << text;  // 800 / 200
    // A peer's row has its rate over the floor's alone; the footnotes say what they are.
    const auto curator = words_of(row_line(text, "uncontended", "curator"));
    ASSERT_GE(curator.size(), 1u) << text;
    EXPECT_EQ(curator.back(), "0.40x") << text;  // 400 / 1000
    const auto curator_line = row_line(text, "uncontended", "curator");
    EXPECT_EQ(std::count(curator_line.begin(), curator_line.end(), 'x'), 1) << text;
    EXPECT_EQ(row_line(text, "uncontended", "c-client").find('x'), std::string::npos) << text;
    EXPECT_NE(text.find("vs floor: a row's ops/s over the floor's"), std::string::npos) << text;
    EXPECT_NE(text.find("vs curator, kazoo: zklock's ops/s over theirs"), std::string::npos) << text;
}

// A requeue row's floor is the requeue floor; its peers are the plain ones
// (a fleet taking turns against Curator's loop).
TEST(BenchTable, RequeueRowsCompareWithTheRequeueFloorAndThePeers) {
    auto rq = row("zookeeper", "contended", 8, 1800, 1, 1);
    rq["requeue"] = true;
    auto rq_floor = row("c-client floor", "contended", 8, 2000, 1, 1);
    rq_floor["requeue"] = true;
    std::vector<json> rows = {row("c-client floor", "contended", 8, 1000, 1, 1), row("zookeeper", "contended", 8, 900, 1, 1),
                              rq_floor, rq, row("curator", "contended", 8, 600, 1, 1)};
    add_rate_ratios(rows);
    EXPECT_DOUBLE_EQ(rows[1]["ops_per_s_vs_floor"].get<double>(), 0.9);
    EXPECT_DOUBLE_EQ(rows[1]["ops_per_s_vs_curator"].get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(rows[3]["ops_per_s_vs_floor"].get<double>(), 0.9);  // 1800 / the requeue floor's 2000
    EXPECT_DOUBLE_EQ(rows[3]["ops_per_s_vs_curator"].get<double>(), 3.0);
    EXPECT_DOUBLE_EQ(rows[4]["ops_per_s_vs_floor"].get<double>(), 0.6);
    EXPECT_FALSE(rows[4].contains("ops_per_s_vs_kazoo")) << rows[4].dump();
    for (const auto i : {0, 2}) EXPECT_FALSE(rows[i].contains("ops_per_s_vs_floor")) << rows[i].dump();
    const auto text = format_table(rows, fifo);
    std::vector<std::string> zk;
    for (const auto& line : lines_of(text))
        if (line.find("zookeeper requeue") != std::string::npos) zk = words_of(line);
    ASSERT_GE(zk.size(), 3u) << text;
    EXPECT_EQ(zk[zk.size() - 2], "0.90x") << text;
    EXPECT_EQ(zk.back(), "3.00x") << text;
    EXPECT_NE(row_line(text, "contended", "requeue").find("requeue floor"), std::string::npos) << text;
}

// --rounds N: a ratio is taken within a round, and the median row of each
// client kind gives the median of each figure and of each round's ratio.
TEST(BenchRounds, RatiosStayWithinARoundAndTheMediansAreOfTheRounds) {
    std::vector<json> rows;
    const double zklock[] = {900, 1200, 1000}, floor[] = {1000, 1000, 2000}, curator[] = {300, 600, 400};
    for (int round = 1; round <= 3; ++round) {
        for (const auto& [backend, rate] : {std::pair{"c-client floor", floor[round - 1]},
                                            std::pair{"zookeeper", zklock[round - 1]},
                                            std::pair{"curator", curator[round - 1]}}) {
            auto r = row(backend, "uncontended", 1, rate, rate / 10, rate / 5);
            r["round"] = round;
            r["server_work"] = {{"transactions", 4000 + round}};
            rows.push_back(r);
        }
    }
    add_rate_ratios(rows);
    EXPECT_DOUBLE_EQ(rows[1]["ops_per_s_vs_floor"].get<double>(), 0.9);   // round 1: 900 / 1000
    EXPECT_DOUBLE_EQ(rows[4]["ops_per_s_vs_floor"].get<double>(), 1.2);   // round 2: 1200 / 1000
    EXPECT_DOUBLE_EQ(rows[7]["ops_per_s_vs_floor"].get<double>(), 0.5);   // round 3: 1000 / 2000
    EXPECT_DOUBLE_EQ(rows[7]["ops_per_s_vs_curator"].get<double>(), 2.5);  // 1000 / 400
    const auto medians = median_rows(rows);
    ASSERT_EQ(medians.size(), 3u);
    const auto& zk = medians[1];
    EXPECT_EQ(zk["backend"], "zookeeper");
    EXPECT_EQ(zk["round"], "median");
    EXPECT_EQ(zk["rounds"], 3);
    EXPECT_DOUBLE_EQ(zk["ops_per_s"].get<double>(), 1000);
    EXPECT_DOUBLE_EQ(zk["ops_per_s_vs_floor"].get<double>(), 0.9);  // of 0.9, 1.2, 0.5: not 1000 / 1000
    EXPECT_DOUBLE_EQ(zk["ops_per_s_vs_curator"].get<double>(), 2.5);  // of 3, 2, 2.5
    EXPECT_EQ(zk["server_work"]["transactions"], 4002);
    EXPECT_EQ(zk["clients"], 1);
    // The median rows keep their ratios in the table, beside the rounds'.
    auto all = rows;
    all.insert(all.end(), medians.begin(), medians.end());
    const auto text = format_table(all, fifo);
    // Each round's rows under a line that says which, the medians last.
    std::string median_line;
    bool in_medians = false;
    std::vector<std::string> headings;
    for (const auto& line : lines_of(text)) {
        if (line.ends_with(":")) headings.push_back(line);
        in_medians = in_medians || line == "median of 3 rounds:";
        const auto w = words_of(line);
        if (in_medians && w.size() > 1 && w[1] == "zookeeper") median_line = line;
    }
    EXPECT_EQ(headings, (std::vector<std::string>{"round 1:", "round 2:", "round 3:", "median of 3 rounds:"})) << text;
    ASSERT_FALSE(median_line.empty()) << text;
    const auto w = words_of(median_line);
    EXPECT_EQ(w[w.size() - 2], "0.90x") << text;
    EXPECT_EQ(w.back(), "2.50x") << text;
    for (const auto& line : lines_of(text)) EXPECT_LE(line.size(), bench_table_width) << line;
}

// The widest table the mutex scenarios print: an ensemble's server, --busy,
// --confirm-unlock's label, the handoff and the out-of-order grants, the
// floor and both peers, figures as large as they get.
TEST(BenchTable, TheWidestTableFitsTheWidth) {
    std::vector<json> rows;
    for (const char* backend : {"c-client floor", "zookeeper", "curator", "kazoo"}) {
        auto r = row(backend, "contended", 64, 12345, 123456, 1234567);
        r["server"] = "follower";
        r["ensemble"] = 5;
        r["busy"] = 16;
        r["handoff_p50_us"] = 12345.0;
        r["out_of_order_grants"] = 1234;
        rows.push_back(r);
    }
    rows[1]["confirm_unlock"] = true;
    // The requeue rows and --rounds' column.
    for (const char* backend : {"c-client floor", "zookeeper"}) {
        auto r = rows[0];
        r["backend"] = backend;
        r["requeue"] = true;
        rows.push_back(r);
    }
    for (auto& r : rows) r["round"] = 100;  // a line of its own, before the rows
    const auto text = format_table(rows, fifo);
    EXPECT_NE(row_line(text, "contended", "zookeeper").find("(confirm)"), std::string::npos) << text;
    EXPECT_NE(text.find("vs\n"), std::string::npos) << text;
    for (const auto& line : lines_of(text)) EXPECT_LE(line.size(), bench_table_width) << line;
}

TEST(BenchTable, ARatioNeedsTheSameClientsAndServer) {
    auto follower = row("zookeeper", "contended", 8, 900, 1, 1);
    follower["server"] = "follower";
    follower["ensemble"] = 3;
    auto leader_floor = row("c-client floor", "contended", 8, 1000, 1, 1);
    leader_floor["server"] = "leader";
    leader_floor["ensemble"] = 3;
    const std::vector<json> rows = {leader_floor, follower, row("curator", "contended", 4, 300, 1, 1)};
    const auto text = format_table(rows, fifo);
    EXPECT_EQ(text.find("vs "), std::string::npos) << text;
    EXPECT_EQ(text.find("0.90x"), std::string::npos) << text;
    // An ensemble's rows say their server.
    EXPECT_EQ(words_of(row_line(text, "contended", "zookeeper")).at(2), "follower") << text;
}

TEST(BenchTable, OutOfOrderGrantsOnAFifoRowGetTheFootnote) {
    auto zk = row("zookeeper", "contended", 8, 1500, 5000, 9000);
    zk["out_of_order_grants"] = 24;
    auto redis = row("redis", "contended", 8, 3000, 2000, 9000);
    redis["out_of_order_grants"] = 700;
    const auto with = format_table({zk, redis}, fifo);
    EXPECT_NE(row_line(with, "contended", "zookeeper").find("24*"), std::string::npos) << with;
    EXPECT_EQ(row_line(with, "contended", "redis").find("700*"), std::string::npos) << with;
    const auto footnote = lines_of(with).back();
    EXPECT_EQ(footnote.rfind("* out of order on a FIFO lock: request times taken on the clients", 0), 0u) << with;
    EXPECT_LE(footnote.size(), bench_table_width);
    // Not on a backend that is not FIFO, nor where there are none.
    EXPECT_EQ(format_table({redis}, fifo).find('*'), std::string::npos);
    zk["out_of_order_grants"] = 0;
    EXPECT_EQ(format_table({zk}, fifo).find('*'), std::string::npos);
}

TEST(BenchTable, RowsWithoutALatencyAreWrappedNameValueLines) {
    const json waiters = {{"backend", "zookeeper"},
                          {"scenario", "waiters"},
                          {"waiters", 1000},
                          {"sessions", 20},
                          {"enqueue_s", 1.234},
                          {"enqueue_per_s", 810.4},
                          {"drain_s", 2.5},
                          {"handoffs_per_s", 399.6},
                          {"attempts_per_grant", 1.0},
                          {"wakeups_per_grant", 1.0},
                          {"full_listing_bytes", 52000},
                          {"rss_per_waiter_bytes", 2100.5},
                          {"grants_out_of_fifo_order", 0},
                          {"errors", 0},
                          {"server_work", {{"commits", 9}}}};
    const auto text = format_table({waiters}, fifo);
    const auto lines = lines_of(text);
    ASSERT_GE(lines.size(), 2u) << text;
    EXPECT_EQ(lines[0].rfind("waiters zookeeper: ", 0), 0u) << text;
    for (const auto& line : lines) EXPECT_LE(line.size(), bench_table_width) << line;
    EXPECT_NE(text.find("waiters 1000"), std::string::npos) << text;
    EXPECT_NE(text.find("enqueue_per_s 810"), std::string::npos) << text;
    EXPECT_NE(text.find("errors 0"), std::string::npos) << text;
    EXPECT_EQ(text.find("commits"), std::string::npos) << text;
}

TEST(BenchTable, NoRowsNoText) { EXPECT_EQ(format_table({}, fifo), ""); }

} // namespace
} // namespace zklock::cli
