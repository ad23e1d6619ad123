// zklock bench's scenarios beyond the latency runs: mixed (zklock, Apache
// Curator and kazoo clients on one lock at once, each kind's grants counted over
// one window and every hold stamped, so that holds which overlapped are counted
// per pair of kinds), waiters (one long queue, filled then drained) and locks
// (many locks held at once through one Session).
#include "json_output.hpp"
#include "test_cli_support.hpp"

#include <nlohmann/json.hpp>

using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

class CliBenchMixedTest : public CliTest {};

class CliBenchScaleTest : public CliTest {
protected:
    /// Runs `zklock bench -c SERVER ARGS --json`; returns its JSON line, or
    /// null when it failed or printed none (the test fails then, with its output).
    nlohmann::json bench_json(const std::vector<std::string>& args) {
        Cli cli;
        auto p = cli.start(plus(plus({"bench", "-c", server_->connect_string()}, args), {"--json"}), "bench");
        const int code = exit_code(p, 300s);
        EXPECT_EQ(code, 0) << cli.output("bench");
        const auto j = last_json_line(cli.output("bench"));
        EXPECT_TRUE(j.is_object()) << cli.output("bench");
        return code == 0 && j.is_object() ? j : nlohmann::json{};
    }
};

TEST_F(CliBenchMixedTest, EveryKindTakesTurnsAndNoZklockHoldOverlapsAnother) {
    Cli cli;
    // One client of each kind, each hold 1 ms long, so that holds of clients that
    // did not wait for each other would be seen to overlap.
    auto p = cli.start({"bench", "-c", server_->connect_string(), "--scenario", "mixed", "--clients", "1", "--duration",
                        "2s", "--hold", "1ms", "--warmup", "0", "--json"},
                       "bench", {{"XDG_CACHE_HOME", cli.dir().string()}});
    ASSERT_EQ(exit_code(p, 300s), 0) << cli.output("bench");
    const auto out = cli.output("bench");
    const auto j = last_json_line(out);
    ASSERT_TRUE(j.is_object()) << out;
    EXPECT_EQ(j.at("scenario"), "mixed");
    EXPECT_EQ(j.at("clients_per_kind"), 1);
    for (const auto* kind : {"zklock", "curator", "kazoo"}) {
        ASSERT_TRUE(j.at("kinds").contains(kind)) << kind << " did not run: " << out;
        EXPECT_GT(j.at("kinds").at(kind).at("grants").get<int>(), 0) << kind << " made no progress: " << out;
    }
    // zklock waits for Curator's and kazoo's nodes and both wait for zklock's
    // (kazoo with extra_lock_patterns=["-lock-"]), so no zklock hold overlaps
    // another. Curator does not wait for kazoo's names: those two may overlap.
    for (const auto& [pair, n] : j.at("overlaps_by_pair").items())
        EXPECT_EQ(pair.find("zklock"), std::string::npos) << n << " overlapping holds of " << pair << ": " << out;
}

// --kazoo runs kazoo's Lock beside zklock's run of each mutex scenario, on the
// same server, and prints its row as the bench prints every row.
TEST_F(CliBenchMixedTest, KazooRunsEachMutexScenarioBesideZklock) {
    Cli cli;
    auto p = cli.start({"bench", "-c", server_->connect_string(), "--scenario", "all", "--clients", "2", "--ops", "10",
                        "--warmup", "0", "--no-floor", "--kazoo", "--json"},
                       "bench");
    ASSERT_EQ(exit_code(p, 300s), 0) << cli.output("bench");
    const auto out = cli.output("bench");
    std::vector<nlohmann::json> rows;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("{")) rows.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(rows.size(), 4u) << out;
    const std::pair<const char*, int> scenarios[] = {{"uncontended", 1}, {"contended", 2}};
    for (std::size_t i = 0; i < 2; ++i) {
        const auto& [scenario, clients] = scenarios[i];
        const auto& zk = rows[2 * i];
        const auto& kazoo = rows[2 * i + 1];
        EXPECT_EQ(zk.at("backend"), "zookeeper") << out;
        EXPECT_EQ(zk.at("scenario"), scenario) << out;
        EXPECT_EQ(kazoo.at("backend"), "kazoo") << out;
        EXPECT_EQ(kazoo.at("scenario"), scenario) << out;
        EXPECT_EQ(kazoo.at("clients"), clients) << out;
        EXPECT_EQ(kazoo.at("ops"), 10) << out;
        EXPECT_GT(kazoo.at("p50_us").get<double>(), 0) << out;
        EXPECT_GT(kazoo.at("ops_per_s").get<double>(), 0) << out;
    }
}

// Every waiter is queued before the drain starts, and each is granted in the
// order of its node's sequence; the full queue's listing is the sum of the
// names (zklock's are 55 bytes: "_c_" + a 36-character UUID + "-lock-" + ten
// digits) with their 4-byte lengths.
TEST_F(CliBenchScaleTest, WaitersAreQueuedThenGrantedInFifoOrder) {
    const auto j = bench_json({"--scenario", "waiters", "--waiters", "60", "--sessions", "4", "--warmup", "0"});
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.at("waiters"), 60);
    EXPECT_EQ(j.at("sessions"), 4);
    EXPECT_EQ(j.at("errors"), 0);
    EXPECT_EQ(j.at("grants_out_of_fifo_order"), 0);
    EXPECT_EQ(j.at("full_listing_bytes"), 60 * (55 + 4));
    EXPECT_GE(j.at("attempts_per_grant").get<double>(), 1.0);
}

// --lock-delay gives the waiters MutexOptions::lock_delay. Each grant checks
// its handover, and each release is clean and records itself: were one
// judged a loss, its successor would wait the delay, an hour here, and the
// run would not end within the test's deadline.
TEST_F(CliBenchScaleTest, WaitersUnderLockDelayDrainInFifoOrderWithCleanHandovers) {
    const auto j = bench_json(
        {"--scenario", "waiters", "--waiters", "30", "--sessions", "2", "--warmup", "0", "--lock-delay", "1h"});
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.value("lock_delay_ms", 0), 3600000) << j.dump();
    EXPECT_EQ(j.at("waiters"), 30);
    EXPECT_EQ(j.at("errors"), 0);
    EXPECT_EQ(j.at("grants_out_of_fifo_order"), 0);
}

// Beside the burst: one lock's cycle through the same Session, and the C
// client's floors of both, with what pipelining gained in each.
TEST_F(CliBenchScaleTest, OneSessionHoldsManyLocksAtOnce) {
    const auto j = bench_json({"--scenario", "locks", "--locks", "200", "--warmup", "0", "--ops", "20"});
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.at("locks"), 200);
    EXPECT_EQ(j.at("errors"), 0);
    for (const char* key : {"cycles_per_s", "single_lock_cycles_per_s", "gain", "floor_acquires_per_s",
                            "floor_cycles_per_s", "floor_single_lock_cycles_per_s", "floor_gain",
                            "cycles_per_s_vs_floor", "rss_per_lock_bytes"})
        EXPECT_GT(j.value(key, 0.0), 0.0) << key << ": " << j.dump();
    EXPECT_NEAR(j.at("gain").get<double>(),
                j.at("cycles_per_s").get<double>() / j.at("single_lock_cycles_per_s").get<double>(), 1e-6);
    EXPECT_EQ(j.at("taken_on"), "bench thread");
}

// --on-session makes, takes and releases the locks in a handler on the
// Session's executor (the bench reports the thread they were taken on).
TEST_F(CliBenchScaleTest, LocksCanBeTakenOnTheSessionsExecutor) {
    const auto j = bench_json(
        {"--scenario", "locks", "--locks", "100", "--warmup", "0", "--ops", "5", "--no-floor", "--on-session"});
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.at("locks"), 100);
    EXPECT_EQ(j.at("errors"), 0);
    EXPECT_EQ(j.at("taken_on"), "session executor");
    EXPECT_GT(j.value("acquires_per_s", 0.0), 0.0) << j.dump();
    EXPECT_GT(j.value("releases_per_s", 0.0), 0.0) << j.dump();
}

}  // namespace
