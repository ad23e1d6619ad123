// `zklock bench` and `zklock chaos` run the zklock-bench program beside zklock:
// its help is theirs, each scenario is also a subcommand with only its own
// options, zklock-bench takes both forms when run directly, and a zklock
// without zklock-bench beside it says where it looked and exits 69.
#include "json_output.hpp"
#include "test_cli_support.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

TEST(CliBenchProgramTest, HelpListsTheScenariosAsSubcommandsEachWithItsOwnOptions) {
    Cli cli;
    auto bench = cli.start({"help", "bench"}, "bench");
    EXPECT_EQ(exit_code(bench), 0) << cli.output("bench");
    EXPECT_TRUE(contains(cli.output("bench"), "Usage: zklock bench")) << cli.output("bench");
    for (const char* scenario : {"uncontended", "contended", "separate", "mixed", "waiters", "locks", "multi",
                                 "election", "semaphore", "rwlock", "safety"})
        EXPECT_TRUE(contains(cli.output("bench"), std::string("\n  ") + scenario + " ")) << scenario;
    auto waiters = cli.start({"help", "bench", "waiters"}, "waiters");
    EXPECT_EQ(exit_code(waiters), 0) << cli.output("waiters");
    EXPECT_TRUE(contains(cli.output("waiters"), "Usage: zklock bench waiters")) << cli.output("waiters");
    EXPECT_TRUE(contains(cli.output("waiters"), "--sessions")) << cli.output("waiters");
    EXPECT_FALSE(contains(cli.output("waiters"), "--locks")) << cli.output("waiters");
    auto chaos = cli.start({"chaos", "--help"}, "chaos");
    EXPECT_EQ(exit_code(chaos), 0) << cli.output("chaos");
    EXPECT_TRUE(contains(cli.output("chaos"), "Usage: zklock chaos")) << cli.output("chaos");

    // Another scenario's option, and a flag-form option before the scenario's name.
    auto other = cli.start({"bench", "waiters", "--locks", "5"}, "other");
    EXPECT_EQ(exit_code(other), 64) << cli.output("other");
    auto before = cli.start({"bench", "--ops", "5", "waiters"}, "before");
    EXPECT_EQ(exit_code(before), 64) << cli.output("before");
    EXPECT_TRUE(contains(cli.output("before"), "--ops given before the scenario waiters")) << cli.output("before");
}

// `zklock bench --help` is one screen: the scenarios, not the flag form's
// options (which still parse, for scripts); the developer knobs are in the
// help of the scenarios they apply to, under their own heading.
TEST(CliBenchProgramTest, HelpIsOneScreenAndTheKnobsAreInTheirScenariosHelp) {
    Cli cli;
    const auto help = [&cli](const std::vector<std::string>& args, const std::string& name) {
        auto p = cli.start(args, name);
        EXPECT_EQ(exit_code(p), 0) << cli.output(name);
        return cli.output(name);
    };
    const auto bench = help({"bench", "--help"}, "bench");
    std::size_t lines = 0;
    for (const char c : bench) lines += c == '\n';
    EXPECT_LE(lines, 50u) << bench;
    for (const char* option : {"--scenario", "--recipe", "--safety", "--connect", "--floor-requeue",
                               "--floor-release-proof", "--no-release-mark", "--one-thread", "--curator"})
        EXPECT_FALSE(contains(bench, option)) << option << "\n" << bench;
    EXPECT_TRUE(contains(bench, "bench contended --help")) << bench;

    const auto contended = help({"bench", "contended", "--help"}, "contended");
    EXPECT_TRUE(contains(contended, "Developer knobs:")) << contended;
    for (const char* option : {"--floor-release-proof", "--floor-requeue", "--no-release-mark", "--one-thread"})
        EXPECT_TRUE(contains(contended.substr(contended.find("Developer knobs:")), option)) << option << "\n"
                                                                                              << contended;
    const auto uncontended = help({"bench", "uncontended", "--help"}, "uncontended");
    EXPECT_TRUE(contains(uncontended, "--floor-requeue")) << uncontended;
    EXPECT_FALSE(contains(uncontended, "--floor-release-proof")) << uncontended;
    const auto locks = help({"bench", "locks", "--help"}, "locks");
    EXPECT_TRUE(contains(locks, "--no-floor")) << locks;
    EXPECT_FALSE(contains(locks, "--floor-requeue")) << locks;
    EXPECT_FALSE(contains(locks, "--floor-release-proof")) << locks;
}

TEST(CliBenchProgramTest, AZklockWithoutZklockBenchBesideItSaysWhereItLookedAndExits69) {
    Cli cli;
    const auto alone = cli.file("alone");
    std::filesystem::create_directories(alone);
    std::filesystem::copy_file(ZKLOCK_CLI_PATH, alone / "zklock");
    const std::vector<std::vector<std::string>> runs = {{"bench", "--ops", "5"}, {"chaos", "--help"}, {"help", "bench"}};
    for (const auto& args : runs) {
        ChildProcessOptions o;
        o.output_path = cli.file(args[0] + ".out");
        auto argv = args;
        argv.insert(argv.begin(), (alone / "zklock").string());
        ChildProcess p(std::move(argv), o);
        EXPECT_EQ(exit_code(p), 69) << read_file(o.output_path);
        EXPECT_TRUE(contains(read_file(o.output_path), "looked for " + (alone / "zklock-bench").string()))
            << read_file(o.output_path);
    }
}

class CliBenchScenarioTest : public CliTest {};

// A scenario's subcommand runs what --scenario (or --recipe) runs, through
// zklock, and through zklock-bench itself in both forms.
TEST_F(CliBenchScenarioTest, EachScenarioRunsAsASubcommandAndInTheFlagForm) {
    const auto connect = server_->connect_string();
    const std::vector<std::vector<std::string>> runs = {
        {"bench", "uncontended", "-c", connect, "--ops", "5", "--warmup", "0", "--no-floor", "--json"},
        {"bench", "waiters", "-c", connect, "--waiters", "3", "--sessions", "1", "--warmup", "0", "--json"},
        {"bench", "election", "-c", connect, "--clients", "2", "--ops", "3", "--warmup", "0", "--json"},
        // The flag form, out of the help, still runs (scripts use it).
        {"bench", "-c", connect, "--scenario", "waiters", "--waiters", "3", "--sessions", "1", "--warmup", "0",
         "--json"},
    };
    const std::vector<std::string> scenarios = {"uncontended", "waiters", "election", "waiters"};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        Cli cli;
        auto p = cli.start(runs[i], scenarios[i]);
        ASSERT_EQ(exit_code(p, 120s), 0) << cli.output(scenarios[i]);
        const auto j = last_json_line(cli.output(scenarios[i]));
        ASSERT_TRUE(j.is_object()) << cli.output(scenarios[i]);
        EXPECT_EQ(j.at("scenario"), scenarios[i]) << j.dump();
    }

    const auto program = std::filesystem::path(ZKLOCK_CLI_PATH).parent_path() / "zklock-bench";
    Cli cli;
    for (const auto& [name, form] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"subcommand", {"uncontended", "-c", connect}}, {"flag", {"-c", connect, "--scenario", "uncontended"}}}) {
        auto argv = plus({program.string()}, plus(form, {"--ops", "5", "--warmup", "0", "--no-floor", "--json"}));
        ChildProcessOptions o;
        o.output_path = cli.file(name + ".out");
        ChildProcess p(std::move(argv), o);
        ASSERT_EQ(exit_code(p, 120s), 0) << read_file(o.output_path);
        const auto j = last_json_line(read_file(o.output_path));
        ASSERT_TRUE(j.is_object()) << read_file(o.output_path);
        EXPECT_EQ(j.at("scenario"), "uncontended") << j.dump();
    }
}

// Without --json the rows are one table: a line each, under 120 columns, no
// JSON in them, zklock's rate over the floor's on its row.
TEST_F(CliBenchScenarioTest, ThePlainOutputIsATableWithTheRatioToTheFloor) {
    Cli cli;
    auto p = cli.start({"bench", "uncontended", "-c", server_->connect_string(), "--ops", "20", "--warmup", "0"},
                       "plain");
    ASSERT_EQ(exit_code(p, 120s), 0) << cli.output("plain");
    std::istringstream out(cli.output("plain"));
    std::vector<std::string> table;
    for (std::string line; std::getline(out, line);) {
        EXPECT_LE(line.size(), 120u) << line;
        EXPECT_FALSE(contains(line, "{")) << line;
        if (!line.starts_with("zklock bench:")) table.push_back(line);  // the notes on stderr
    }
    // A header of two lines, the floor, zklock, the ratio's footnote.
    ASSERT_EQ(table.size(), 5u) << cli.output("plain");
    EXPECT_TRUE(table[0].ends_with("vs")) << table[0];
    EXPECT_TRUE(table[1].starts_with("scenario")) << table[1];
    EXPECT_TRUE(table[1].ends_with("floor")) << table[1];
    EXPECT_TRUE(table[2].starts_with("uncontended  c-client floor")) << table[2];
    EXPECT_TRUE(table[3].starts_with("uncontended  zookeeper")) << table[3];
    EXPECT_TRUE(table[3].ends_with("x")) << table[3];
    EXPECT_TRUE(table[4].starts_with("vs floor: a row's ops/s over the floor's")) << table[4];
}

// A peer asked for that cannot run fails the bench (exit 69): a harness that
// is not there before anything runs; a harness that fails (Curator's jars not
// in JAVA_DIR) after zklock's rows, which are printed.
TEST_F(CliBenchScenarioTest, APeerAskedForThatCannotRunFailsTheBench) {
    Cli cli;
    const std::vector<std::string> run{"bench", "uncontended", "-c", server_->connect_string(), "--ops", "5",
                                       "--warmup", "0", "--no-floor", "--json", "--curator"};
    auto missing = cli.start(plus(run, {"--curator-script", cli.file("nowhere/run.sh").string()}), "missing");
    EXPECT_EQ(exit_code(missing, 120s), 69) << cli.output("missing");
    EXPECT_TRUE(contains(cli.output("missing"), "--curator: the Curator harness is not at")) << cli.output("missing");
    EXPECT_TRUE(zklock::test::json_lines(cli.output("missing")).empty()) << cli.output("missing");

    const auto no_jars = cli.file("no-jars");
    std::filesystem::create_directories(no_jars);
    auto failing = cli.start(run, "failing", {{"JAVA_DIR", no_jars.string()}});
    EXPECT_EQ(exit_code(failing, 120s), 69) << cli.output("failing");
    EXPECT_TRUE(contains(cli.output("failing"), "curator asked for but could not run")) << cli.output("failing");
    // Qualified: another test's json_lines() (a file's) would be picked in a unity build.
    const auto rows = zklock::test::json_lines(cli.output("failing"));
    ASSERT_EQ(rows.size(), 1u) << cli.output("failing");
    EXPECT_EQ(rows[0].at("backend"), "zookeeper") << rows[0].dump();
}

}  // namespace
