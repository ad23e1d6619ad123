// zklock bench --safety's pure parts: which fault applies where, the option
// checks, the client protocol and the resource's answers, the tally of a run,
// the report's layout, and the naive recipes' reading of Redis replies.
#include "safety/safety.hpp"
#include "safety/naive.hpp"
#include "safety/plan.hpp"
#include "safety/protocol.hpp"
#include "safety/tally.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace zklock::cli;
using namespace zklock::cli::safety;
using namespace std::chrono_literals;

// --- plan ---------------------------------------------------------------------------

TEST(SafetyPlan, EveryBackendAndBothAntiExamplesAreRowsInReportOrder) {
    const std::vector<std::string_view> expected = {
        "zookeeper",        "redis",       "redlock",        "postgres-lease", "postgres-advisory", "postgres-row",
        "postgres-version", "mysql-lease", "mysql-advisory", "mysql-row",      "mysql-version",     "flock",
        "memcached",        "etcd",        "naive-setnx-expire", "naive-setnx-getset"};
    EXPECT_EQ(row_names(), expected);
    EXPECT_TRUE(is_anti_example("naive-setnx-expire"));
    EXPECT_TRUE(is_anti_example("naive-setnx-getset"));
    EXPECT_FALSE(is_anti_example("redis"));
    for (const auto r : row_names()) EXPECT_FALSE(row_description(r).empty()) << r;
    for (const auto f : fault_names()) EXPECT_FALSE(fault_description(f).empty()) << f;
    EXPECT_NE(row_description("naive-setnx-expire").find("anti-example"), std::string_view::npos);
}

TEST(SafetyPlan, FaultsApplyWhereTheRowHasWhatTheyBreak) {
    EXPECT_TRUE(not_applicable("flock", "killed-server"));
    EXPECT_TRUE(not_applicable("flock", "partitioned-client"));
    EXPECT_TRUE(not_applicable("flock", "restart-without-persistence"));
    EXPECT_FALSE(not_applicable("flock", "paused-holder"));
    EXPECT_FALSE(not_applicable("flock", "killed-holder"));
    for (const auto* r : {"zookeeper", "postgres-lease", "postgres-advisory", "postgres-row", "postgres-version",
                          "mysql-lease", "mysql-advisory", "mysql-row", "mysql-version"}) {
        EXPECT_TRUE(not_applicable(r, "restart-without-persistence")) << r;
        EXPECT_FALSE(not_applicable(r, "killed-server")) << r;
        EXPECT_FALSE(not_applicable(r, "partitioned-client")) << r;
    }
    for (const auto* r : {"redis", "redlock", "memcached", "naive-setnx-expire", "naive-setnx-getset"})
        for (const auto f : fault_names()) EXPECT_FALSE(not_applicable(r, f)) << r << " " << f;
}

TEST(SafetyPlan, AMemcachedRowHasNoTokenAndALeaseOfWholeSecondsAtLeastTwo) {
    EXPECT_FALSE(has_fencing_token("memcached"));
    for (const auto r : row_names())
        if (r != "memcached") {
            EXPECT_TRUE(has_fencing_token(r)) << r;
        }
    EXPECT_EQ(row_ttl("memcached", 1000ms), 2000ms);
    EXPECT_EQ(row_ttl("memcached", 3000ms), 3000ms);
    EXPECT_EQ(row_ttl("redis", 1000ms), 1000ms);
    // Its fence columns are n/a (null), not zeros that would read as "refused nothing".
    const auto row = make_row("memcached", "paused-holder", {}, {}, {}, nlohmann::json::object());
    EXPECT_TRUE(row["stale_accepted_fenced"].is_null());
    EXPECT_TRUE(row["duplicate_tokens"].is_null());
    EXPECT_EQ(row["fencing"], "none");
    EXPECT_TRUE(make_row("redis", "paused-holder", {}, {}, {}, nlohmann::json::object())["duplicate_tokens"].is_number());
}

TEST(SafetyPlan, OnlyTheKilledSetnxExpireHolderDiesBetweenItsTwoCommands) {
    EXPECT_EQ(trigger_of("naive-setnx-expire", "killed-holder"), trigger::between_commands);
    EXPECT_EQ(trigger_of("naive-setnx-expire", "paused-holder"), trigger::second_write);
    EXPECT_EQ(trigger_of("naive-setnx-getset", "killed-holder"), trigger::second_write);
    EXPECT_EQ(trigger_of("zookeeper", "killed-holder"), trigger::second_write);
}

TEST(SafetyPlan, SettingsThatCannotRunAreRefusedWithAReason) {
    safety_settings ok;
    EXPECT_FALSE(check_settings(ok));
    auto s = ok;
    s.clients = 1;
    EXPECT_NE(check_settings(s).value_or("").find("--clients"), std::string::npos);
    s = ok;
    s.ttl = 100ms;
    EXPECT_NE(check_settings(s).value_or("").find("--ttl"), std::string::npos);
    s = ok;
    s.write_interval = s.ttl;
    EXPECT_NE(check_settings(s).value_or("").find("--write-interval"), std::string::npos);
    s = ok;
    s.fault_duration = 0ms;
    EXPECT_NE(check_settings(s).value_or("").find("--fault-duration"), std::string::npos);
    s = ok;
    s.grants = 0;
    EXPECT_NE(check_settings(s).value_or("").find("--ops"), std::string::npos);
}

TEST(SafetyPlan, ExpandKeepsReportOrderDropsDuplicatesAndRefusesUnknownNames) {
    std::string error;
    EXPECT_EQ(expand({"naive-setnx-getset", "zookeeper", "zookeeper"}, row_names(), "backend", error),
              (std::vector<std::string>{"zookeeper", "naive-setnx-getset"}));
    EXPECT_TRUE(error.empty());
    EXPECT_EQ(expand({"all"}, fault_names(), "fault", error).size(), fault_names().size());
    EXPECT_TRUE(expand({"zookeeper", "nosuch"}, row_names(), "backend", error).empty());
    EXPECT_EQ(error, "unknown backend 'nosuch'");
}

// --- protocol -------------------------------------------------------------------------

TEST(SafetyProtocol, EveryRequestReadsBackAsWritten) {
    const std::vector<request> requests = {{request_kind::hello, 2, ""},     {request_kind::next, 0, ""},
                                           {request_kind::between, 0, ""},   {request_kind::failed, 0, "acquire: x"},
                                           {request_kind::enter, 4294967298, ""}, {request_kind::ready, 3, ""},
                                           {request_kind::write, 0, ""},     {request_kind::leave, 0, ""},
                                           {request_kind::leave, 0, "session expired"},
                                           {request_kind::released, 0, ""},  {request_kind::released, 0, "lost: gone"}};
    for (const auto& r : requests) {
        const auto back = parse_request(format(r));
        ASSERT_TRUE(back) << format(r);
        EXPECT_EQ(back->kind, r.kind) << format(r);
        EXPECT_EQ(back->number, r.number) << format(r);
        EXPECT_EQ(back->text, r.text) << format(r);
    }
    EXPECT_EQ(format({request_kind::leave, 0, ""}), "leave -");
    EXPECT_EQ(format({request_kind::released, 0, ""}), "released ok");
    EXPECT_EQ(format({request_kind::failed, 0, "two\nlines"}), "failed two lines");
}

TEST(SafetyProtocol, LinesThatAreNoRequestAreRefused) {
    for (const char* line : {"", "enter", "enter x", "enter 1 2", "ready", "write 3", "leave", "released", "failed",
                             "hello -", "nonsense 1", "next now"})
        EXPECT_FALSE(parse_request(line)) << "'" << line << "'";
}

TEST(SafetyProtocol, OrdinarySectionsWriteTwiceThenEnd) {
    const run_phase phase;
    const faulted_section plain;
    EXPECT_EQ(answer_ready(1, 2, true, phase, plain), answer::go);
    EXPECT_EQ(answer_ready(2, 2, true, phase, plain), answer::go);
    EXPECT_EQ(answer_ready(3, 2, true, phase, plain), answer::end);
    EXPECT_EQ(answer_next(phase), answer::go);
}

TEST(SafetyProtocol, TheArmedFaultHoldsBackTheFirstHolderAtItsSecondWrite) {
    run_phase armed;
    armed.fault_armed = true;
    const faulted_section plain;
    EXPECT_EQ(answer_ready(1, 2, true, armed, plain), answer::go);
    EXPECT_EQ(answer_ready(2, 2, true, armed, plain), answer::hold_back);
    EXPECT_EQ(answer_ready(2, 2, false, armed, plain), answer::go);  // the trigger is between SETNX and EXPIRE
}

TEST(SafetyProtocol, TheFaultedHolderWritesUntilTheFaultSettledAndItWroteOnceMore) {
    run_phase phase;
    phase.fault_started = true;
    faulted_section f;
    f.is_faulted = true;
    EXPECT_EQ(answer_ready(40, 2, true, phase, f), answer::go);  // the fault goes on
    phase.fault_ended = true;
    EXPECT_EQ(answer_ready(41, 2, true, phase, f), answer::go);  // its late write
    f.wrote_after_fault = true;
    EXPECT_EQ(answer_ready(42, 2, true, phase, f), answer::go);  // not a lease since the fault began yet
    phase.fault_settled = true;
    EXPECT_EQ(answer_ready(43, 2, true, phase, f), answer::end);
    f.wrote_after_fault = false;
    EXPECT_EQ(answer_ready(43, 2, true, phase, f), answer::go);
}

TEST(SafetyProtocol, StoppingEndsSectionsAndClients) {
    run_phase phase;
    phase.fault_started = phase.fault_ended = phase.fault_settled = phase.stopping = true;
    EXPECT_EQ(answer_ready(1, 2, true, phase, {}), answer::end);
    EXPECT_EQ(answer_next(phase), answer::end);
}

// --- tally ----------------------------------------------------------------------------

namespace {

const auto t0 = clock_type::time_point{} + 1h;

section_record section(int client, std::int64_t token, std::chrono::milliseconds entered) {
    section_record s;
    s.client = client;
    s.token = token;
    s.entered = t0 + entered;
    s.left = t0 + entered + 100ms;
    s.release_error = "";
    return s;
}

}  // namespace

TEST(SafetyTally, WritesAreJudgedByGrantOrderWhateverTheTokensSay) {
    grant_order_judge tokens_follow_grants;  // sections 0, 1, 2 in grant order; 0 paused, writes late
    tokens_follow_grants.write(0, true);
    tokens_follow_grants.write(1, true);
    tokens_follow_grants.write(1, true);
    tokens_follow_grants.write(0, false);  // the late write, refused
    tokens_follow_grants.write(2, true);
    EXPECT_EQ(tokens_follow_grants.stale, 1u);
    EXPECT_EQ(tokens_follow_grants.stale_accepted_fenced, 0u);
    EXPECT_EQ(tokens_follow_grants.current_refused, 0u);

    grant_order_judge counter_restarted;  // section 0 has token 9, then the counter restarts: 1 has token 1
    counter_restarted.write(0, true);
    counter_restarted.write(1, false);  // the current holder refused
    counter_restarted.write(0, true);   // the old holder's stale write let through
    counter_restarted.write(1, false);
    EXPECT_EQ(counter_restarted.stale, 1u);
    EXPECT_EQ(counter_restarted.stale_accepted_fenced, 1u);
    EXPECT_EQ(counter_restarted.current_refused, 2u);
}

TEST(SafetyTally, AnOvertakenHolderIsToldOrNotAndAKilledOneIsNeither) {
    auto told = section(0, 1, -50ms);
    told.overtaken = true;
    told.lost_reason = "session expired";
    auto told_at_release = section(1, 2, 0ms);
    told_at_release.overtaken = true;
    told_at_release.release_error = "lost: lock not held";
    auto untold = section(2, 3, 10ms);
    untold.overtaken = true;
    untold.release_error = "error: DEL failed";  // an error is not news of a loss
    auto killed = section(0, 4, 20ms);
    killed.overtaken = true;
    killed.holder_killed = true;
    auto cautious = section(1, 5, 30ms);  // told, though nobody took the lock
    cautious.lost_reason = "connection suspended";
    const auto t = tally({told, told_at_release, untold, killed, cautious}, {t0, t0 + 1s});
    EXPECT_EQ(t.lost_reported, 3u);
    EXPECT_EQ(t.lost_unreported, 1u);
}

TEST(SafetyTally, NextGrantAndRecoveryCountFromTheFaultsStartAndEnd) {
    const auto t = tally({section(0, 1, -100ms), section(1, 2, 0ms), section(2, 3, 400ms), section(0, 4, 1200ms),
                          section(1, 5, 1500ms)},
                         {t0, t0 + 1s});
    ASSERT_TRUE(t.next_grant_after_start);
    EXPECT_EQ(*t.next_grant_after_start, 400ms);  // the grant at the fault's very start is not after it
    ASSERT_TRUE(t.recovery);
    EXPECT_EQ(*t.recovery, 200ms);
    EXPECT_EQ(t.grants_after_fault, 2u);
}

TEST(SafetyTally, ALockNeverGrantedAgainHasNoRecovery) {
    const auto t = tally({section(0, 1, -100ms)}, {t0, t0});
    EXPECT_FALSE(t.next_grant_after_start);
    EXPECT_FALSE(t.recovery);
    EXPECT_EQ(t.grants_after_fault, 0u);
    const auto row = make_row("naive-setnx-expire", "killed-holder", {}, {}, t, {{"stuck_key", true}});
    EXPECT_TRUE(row["recovery_ms"].is_null());
    EXPECT_TRUE(row["anti_example"].get<bool>());
    EXPECT_TRUE(row["stuck_key"].get<bool>());
    EXPECT_EQ(row["status"], "ran");
}

TEST(SafetyTally, IncidentsListTheSectionsWorthALookWithTimesFromTheFault) {
    auto overtaken = section(2, 7, -50ms);
    overtaken.overtaken = true;
    overtaken.lost_reason = "session expired";
    auto killed = section(1, 8, -20ms);
    killed.holder_killed = true;
    killed.left.reset();
    const auto list = incidents({section(0, 6, -300ms), overtaken, killed}, {t0, t0 + 1s});
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0]["client"], 2);
    EXPECT_EQ(list[0]["entered_ms"], -50);
    EXPECT_EQ(list[0]["left_ms"], 50);
    EXPECT_EQ(list[0]["told"], "session expired");
    EXPECT_TRUE(list[1]["killed"].get<bool>());
    EXPECT_TRUE(list[1]["left_ms"].is_null());
}

// --- report -----------------------------------------------------------------------------

namespace {

nlohmann::json sample_report() {
    zklock::lab::safety_summary zk;
    zk.grants = 20;
    zk.writes = 41;
    zk.accepted = 40;
    zk.refused = 1;
    zk.overlaps = 9;
    zk.stale_accepted_unfenced = 1;
    grant_order_judge zk_writes;
    zk_writes.write(0, true);
    zk_writes.write(1, true);
    zk_writes.write(0, false);
    run_tally zt;
    zt.lost_reported = 1;
    zt.recovery = 12ms;
    zt.next_grant_after_start = 510ms;
    zklock::lab::safety_summary naive;
    naive.grants = 4;
    naive.writes = 8;
    naive.accepted = 8;
    return {{"command", "zklock bench --safety --report docs/bench"},
            {"date", "2024-01-01T00:00:00Z"},
            {"machine", {{"cpu", "CPU"}, {"cpus", 2}, {"memory_gib", 24.0}, {"kernel", "Linux 6"}}},
            {"settings",
             {{"clients", 3}, {"ttl_ms", 1000}, {"fault_ms", 3000}, {"write_interval_ms", 50}, {"writes_per_section", 2},
              {"grants_before_and_after", 4}, {"recovery_limit_ms", 7000}}},
            {"servers", {{"zookeeper", "throwaway"}}},
            {"fault_descriptions", {{"paused-holder", "the holder is stopped"}, {"killed-holder", "the holder is killed"}}},
            {"row_descriptions", {{"zookeeper", "the Mutex"}}},
            {"rows",
             {make_row("zookeeper", "paused-holder", zk, zk_writes, zt, {{"notes", nlohmann::json::array({"a|b"})}}),
              make_row("naive-setnx-expire", "killed-holder", naive, {}, {}, {{"stuck_key", true}}),
              skipped_row("flock", "killed-server", "not applicable", "flock has no server")}}};
}

}  // namespace

TEST(SafetyReport, MarkdownHasTheCommandATablePerFaultAndEveryRow) {
    const auto md = safety_markdown(sample_report());
    EXPECT_NE(md.find("Generated by `zklock bench --safety --report docs/bench`"), std::string::npos);
    EXPECT_NE(md.find("Machine: CPU, 2 CPUs"), std::string::npos);
    EXPECT_NE(md.find("## paused-holder\n\nThe holder is stopped.\n"), std::string::npos) << md;
    EXPECT_NE(md.find("| zookeeper | 20 | 9 | 1 | 0 | 0 | 0 | 510 ms | 12 ms | 1 | 0 | a/b |"), std::string::npos) << md;
    EXPECT_NE(md.find("| *naive-setnx-expire* (anti-example) | 4 | 0 | 0 | 0 | 0 | 0 | never | never | 0 | 0 | "
                      "**stuck: the key has no TTL** |"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("- flock: not applicable, flock has no server"), std::string::npos) << md;
    EXPECT_NE(md.find("![Overlapping critical sections"), std::string::npos);
}

TEST(SafetyReport, ChartDataHasAColumnPerFaultThatRanAndMarksTheGaps) {
    const auto report = sample_report();
    EXPECT_EQ(safety_chart_data(report, "overlaps"),
              "backend paused-holder killed-holder\nzookeeper 9 ?\nnaive-setnx-expire ? 0\nflock ? ?\n");
    EXPECT_EQ(safety_chart_data(report, "stale_accepted_unfenced"),
              "backend paused-holder killed-holder\nzookeeper 1 ?\nnaive-setnx-expire ? 0\nflock ? ?\n");
    const auto gp = safety_chart_script(report);
    EXPECT_NE(gp.find("set output 'safety.svg'"), std::string::npos);
    EXPECT_NE(gp.find("set multiplot layout 3,1"), std::string::npos) << gp;
    EXPECT_NE(gp.find("set yrange [0:10]\nset title 'Overlapping critical sections (lower is better)'\n"
                      "plot for [i=2:3] 'safety-overlaps.dat'"),
              std::string::npos)
        << gp;
    EXPECT_NE(gp.find("set yrange [0:2]\nset title 'Stale writes: an unfenced resource takes them all (lower is "
                      "better)'\nplot for [i=2:3] 'safety-stale.dat'"),
              std::string::npos)
        << gp;
    EXPECT_NE(gp.find("set yrange [0:1]\nset title 'Stale writes a fenced resource let through (lower is better)'\n"
                      "plot for [i=2:3] 'safety-fence.dat'"),
              std::string::npos)
        << gp;  // all zero: still a range
}

// --- the naive recipes' replies ------------------------------------------------------

TEST(NaiveRecipes, RedisRepliesAreReadAsValuesOrNil) {
    EXPECT_EQ(redis_value(":1\r\n"), "1");
    EXPECT_EQ(redis_value("+OK\r\n"), "OK");
    EXPECT_EQ(redis_value("$-1\r\n"), std::nullopt);
    EXPECT_EQ(redis_value("$13\r\n1700000000123\r\n"), "1700000000123");
    EXPECT_EQ(redis_value("$0\r\n\r\n"), "");
    EXPECT_THROW(redis_value("-ERR wrong\r\n"), std::runtime_error);
    EXPECT_THROW(redis_value("$5\r\nabc\r\n"), std::runtime_error);
    EXPECT_THROW(redis_value(":1"), std::runtime_error);
}
