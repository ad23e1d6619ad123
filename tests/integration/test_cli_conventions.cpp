// The CLI habits zklock shares with flock(1), etcdctl and consul: -V, help
// (of a subcommand too; a bare zklock; an unknown command), -E, flock's -w,
// -x, -o and -c, `zklock lock` (and its signals), run --shared, --name and the
// holders shown by status, --connect-timeout and what an unreachable server, a
// host that does not resolve or a missing chroot is called, bench's included;
// durations with units on every option; long input cut to a line; and bench
// reports for any subset of scenarios.
#include "silent_listener.hpp"
#include "test_cli_support.hpp"

#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/version.hpp>

#include <nlohmann/json.hpp>

#include <csignal>


using namespace zklock;
using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

// One short run of each kind of `zklock bench` that connects to ZooKeeper:
// each scenario, the recipes with code of their own, the zookeeper backend.
std::vector<std::vector<std::string>> every_bench_scenario() {
    return {
        {"--scenario", "uncontended", "--no-floor"},
        {"--scenario", "multi", "--clients", "2"},
        {"--recipe", "election", "--clients", "2"},
        {"--recipe", "semaphore", "--clients", "2"},
        {"--scenario", "locks", "--locks", "1"},
        {"--scenario", "waiters", "--waiters", "2", "--sessions", "1"},
        {"--backend", "zookeeper", "--scenario", "uncontended"},
    };
}

class CliConventionsTest : public CliTest {};

// --- no server ---------------------------------------------------------------------

TEST(CliHelpTest, VersionAndHelpAnswerAsFlockAndEtcdctlDo) {
    Cli cli;
    for (const std::string flag : {"-V", "--version"}) {
        auto p = cli.start({flag}, "version" + flag);
        EXPECT_EQ(exit_code(p), 0) << cli.output("version" + flag);
        EXPECT_EQ(cli.output("version" + flag), std::string("zklock ") + ZKLOCK_VERSION_STRING + "\n");
    }
    auto all = cli.start({"help"}, "help");
    EXPECT_EQ(exit_code(all), 0) << cli.output("help");
    for (const char* command : {"run", "lock", "status", "elect", "bench", "fence", "help"})
        EXPECT_TRUE(contains(cli.output("help"), std::string("\n  ") + command + " ")) << command << "\n"
                                                                                       << cli.output("help");
    auto run = cli.start({"help", "run"}, "help-run");
    EXPECT_EQ(exit_code(run), 0) << cli.output("help-run");
    EXPECT_TRUE(contains(cli.output("help-run"), "Usage: zklock run")) << cli.output("help-run");
    EXPECT_TRUE(contains(cli.output("help-run"), "--conflict-exit-code")) << cli.output("help-run");
    auto unknown = cli.start({"help", "nosuch"}, "help-unknown");
    EXPECT_EQ(exit_code(unknown), 64) << cli.output("help-unknown");
    EXPECT_TRUE(contains(cli.output("help-unknown"), "no command 'nosuch'")) << cli.output("help-unknown");
}

// Every command that connects says "connection refused" when nothing listens,
// within its --connect-timeout, and by default within 2 s.
TEST(CliConnectTest, RefusedAndSilentServersAreCalledSoByEveryCommand) {
    Cli cli;
    const auto refused = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port());
    const auto marker = cli.file("ran");
    const std::vector<std::vector<std::string>> commands{
        {"run", "-c", refused, "--connect-timeout", "300ms", "/x", "--", "touch", marker.string()},
        {"lock", "-c", refused, "--connect-timeout", "300ms", "/x"},
        {"elect", "-c", refused, "--connect-timeout", "300ms", "/e", "id", "--", "touch", marker.string()},
        {"status", "-c", refused, "--connect-timeout", "300", "/x"},
        {"bench", "-c", refused, "--connect-timeout", "300ms", "--scenario", "uncontended", "--ops", "5", "--no-floor"},
    };
    for (const auto& args : commands) {
        auto p = cli.start(args, args[0]);
        EXPECT_EQ(exit_code(p), 69) << cli.output(args[0]);
        EXPECT_TRUE(contains(cli.output(args[0]), "within 300 ms: " + refused + ": connection refused"))
            << cli.output(args[0]);
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
    auto by_default = cli.start({"status", "-c", refused, "/x"}, "default");
    EXPECT_EQ(exit_code(by_default), 69) << cli.output("default");
    EXPECT_TRUE(contains(cli.output("default"), "within 2000 ms: " + refused + ": connection refused"))
        << cli.output("default");

    // A listener that never speaks ZooKeeper: the kernel completes the handshake.
    {
        SilentListener listener;
        const auto& silent = listener.address();
        auto mute = cli.start({"status", "-c", silent, "--connect-timeout", "300ms", "/x"}, "silent");
        EXPECT_EQ(exit_code(mute), 69) << cli.output("silent");
        EXPECT_TRUE(contains(cli.output("silent"), silent + ": accepts connections but gave no ZooKeeper session"))
            << cli.output("silent");
    }

    auto bad = cli.start({"status", "-c", refused, "--connect-timeout", "0", "/x"}, "zero");
    EXPECT_EQ(exit_code(bad), 64) << cli.output("zero");
}

// A host that does not resolve is a server out of reach (69, as a DNS outage
// is), not a typo; a connect string that is malformed is one (64). `.invalid`
// never resolves (RFC 6761).
TEST(CliConnectTest, AnUnresolvableHostIsUnavailableAMalformedConnectStringIsABadArgument) {
    Cli cli;
    const auto marker = cli.file("ran");
    const std::vector<std::vector<std::string>> unresolvable{
        {"status", "-c", "nosuchhost.invalid:2181", "--connect-timeout", "300ms", "/x"},
        {"run", "-c", "nosuchhost.invalid:2181", "--connect-timeout", "300ms", "/x", "--", "touch", marker.string()},
    };
    for (const auto& args : unresolvable) {
        auto p = cli.start(args, args[0]);
        EXPECT_EQ(exit_code(p), 69) << cli.output(args[0]);
        EXPECT_TRUE(contains(cli.output(args[0]), "the host did not resolve: nosuchhost.invalid ("))
            << cli.output(args[0]);
        EXPECT_FALSE(contains(cli.output(args[0]), "invalid connect string")) << cli.output(args[0]);
    }
    auto no_port = cli.start({"status", "-c", "127.0.0.1", "/x"}, "no-port");
    EXPECT_EQ(exit_code(no_port), 64) << cli.output("no-port");
    EXPECT_TRUE(contains(cli.output("no-port"), "invalid connect string: '127.0.0.1' has no port (host:port)"))
        << cli.output("no-port");
    EXPECT_FALSE(std::filesystem::exists(marker));
}

// -- A command that is not one: named, with the nearest known one when there is one.
TEST(CliHelpTest, AnUnknownCommandIsNamedWithTheNearestKnownOne) {
    Cli cli;
    auto typo = cli.start({"rnu", "/x", "--", "true"}, "typo");
    EXPECT_EQ(exit_code(typo), 64) << cli.output("typo");
    EXPECT_TRUE(contains(cli.output("typo"), "zklock: no command 'rnu'; did you mean 'run'? (zklock help lists the "
                                             "commands)\n"))
        << cli.output("typo");
    auto far = cli.start({"frobnicate"}, "far");
    EXPECT_EQ(exit_code(far), 64) << cli.output("far");
    EXPECT_TRUE(contains(cli.output("far"), "zklock: no command 'frobnicate' (zklock help lists the commands)\n"))
        << cli.output("far");
    EXPECT_FALSE(contains(cli.output("far"), "did you mean")) << cli.output("far");
    EXPECT_FALSE(contains(cli.output("far"), "A subcommand is required")) << cli.output("far");
}

// Every duration option of run, lock and elect takes a unit (5s, 1.5s, 500ms)
// and a plain number as milliseconds; a bad one is refused in a short sentence.
// Against a port nothing listens on: 69 means every option was taken.
TEST(CliHabitsTest, EveryDurationOptionTakesUnits) {
    Cli cli;
    const auto refused = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port());
    const auto marker = cli.file("ran");
    const std::vector<std::vector<std::string>> taken{
        {"run", "-c", refused, "--connect-timeout", "300ms", "--session-timeout", "5s", "--grace", "2s",
         "--lock-delay", "1.5s", "-w", "2s", "/x", "--", "touch", marker.string()},
        {"run", "-c", refused, "--connect-timeout", "300", "--session-timeout", "5000", "--grace", "2000", "/x", "--",
         "touch", marker.string()},
        {"lock", "-c", refused, "--connect-timeout", "300ms", "--session-timeout", "5s", "--lock-delay", "500ms", "/x"},
        {"elect", "-c", refused, "--connect-timeout", "300ms", "--session-timeout", "5s", "--grace", "2s",
         "--rejoin-delay", "1.5s", "/e", "--", "touch", marker.string()},
    };
    for (std::size_t i = 0; i < taken.size(); ++i) {
        const auto name = "taken" + std::to_string(i);
        auto p = cli.start(taken[i], name);
        EXPECT_EQ(exit_code(p), 69) << cli.output(name);
    }
    const std::vector<std::pair<std::vector<std::string>, std::string>> refusals{
        {{"run", "-c", refused, "--session-timeout", "5x", "/x", "--", "true"},
         "--session-timeout: '5x' has an unknown unit"},
        {{"run", "-c", refused, "--grace", "-1", "/x", "--", "true"}, "--grace: '-1' is not a duration"},
        {{"elect", "-c", refused, "--rejoin-delay", "soon", "/e", "--", "true"},
         "--rejoin-delay: 'soon' is not a duration"},
        {{"lock", "-c", refused, "--session-timeout", "0", "/x"}, "--session-timeout: '0' must be more than 0"},
    };
    for (std::size_t i = 0; i < refusals.size(); ++i) {
        const auto name = "refused" + std::to_string(i);
        auto p = cli.start(refusals[i].first, name);
        EXPECT_EQ(exit_code(p), 64) << cli.output(name);
        const auto out = cli.output(name);
        EXPECT_TRUE(contains(out, refusals[i].second)) << out;
        EXPECT_LT(out.substr(0, out.find('\n')).size(), 200u) << out;  // no range of 300 digits
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
}

// flock -w 5 waits 5 s, zklock's -w 5 waits 5 ms: kept, with a note on stderr.
TEST(CliHabitsTest, APlainWaitBelowASecondGetsAFlockUsersNote) {
    Cli cli;
    const auto refused = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port());
    auto plain = cli.start({"run", "-c", refused, "-w", "5", "/x", "--", "true"}, "plain");
    EXPECT_EQ(exit_code(plain), 69) << cli.output("plain");
    EXPECT_TRUE(contains(cli.output("plain"), "zklock: -w 5 waits 5 ms; for 5 seconds write -w 5s\n"))
        << cli.output("plain");
    auto unit = cli.start({"run", "-c", refused, "-w", "500ms", "/x", "--", "true"}, "unit");
    EXPECT_EQ(exit_code(unit), 69) << cli.output("unit");
    EXPECT_FALSE(contains(cli.output("unit"), " waits ")) << cli.output("unit");
}

// Every other duration option follows -w's rule: a plain number under a
// second is milliseconds, and says so; with a unit, no note.
TEST(CliHabitsTest, APlainNumberBelowASecondGetsANoteOnEveryDurationOption) {
    Cli cli;
    const auto refused = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port());
    const std::vector<std::pair<std::vector<std::string>, std::string>> noted{
        {{"status", "-c", refused, "--connect-timeout", "300", "/x"},
         "zklock: --connect-timeout 300 is 300 ms; for 300 seconds write --connect-timeout 300s\n"},
        {{"run", "-c", refused, "--connect-timeout", "300ms", "--grace", "5", "/x", "--", "true"},
         "zklock: --grace 5 is 5 ms; for 5 seconds write --grace 5s\n"},
        {{"elect", "-c", refused, "--connect-timeout", "300ms", "--rejoin-delay", "20", "/e", "--", "true"},
         "zklock: --rejoin-delay 20 is 20 ms; for 20 seconds write --rejoin-delay 20s\n"},
    };
    for (std::size_t i = 0; i < noted.size(); ++i) {
        const auto name = "noted" + std::to_string(i);
        auto p = cli.start(noted[i].first, name);
        EXPECT_EQ(exit_code(p), 69) << cli.output(name);  // taken: the value is used, as milliseconds
        EXPECT_TRUE(contains(cli.output(name), noted[i].second)) << cli.output(name);
    }
    EXPECT_TRUE(contains(cli.output("noted0"), "within 300 ms")) << cli.output("noted0");
    auto unit = cli.start({"status", "-c", refused, "--connect-timeout", "300ms", "/x"}, "unit");
    EXPECT_EQ(exit_code(unit), 69) << cli.output("unit");
    EXPECT_FALSE(contains(cli.output("unit"), " is 300 ms")) << cli.output("unit");
}

// An option no command takes is named, with the nearest one it has, as a
// mistyped command is; nothing runs.
TEST(CliUsageTest, AnUnknownOptionGetsTheNearestOneOfItsCommand) {
    Cli cli;
    const auto marker = cli.file("ran");
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"status", "--jsn", "/x"},
         "zklock: unknown option '--jsn'; did you mean '--json'? (zklock status --help lists the options)\n"},
        {{"run", "--nonblok", "/x", "--", "touch", marker.string()},
         "zklock: unknown option '--nonblok'; did you mean '--nonblock'? (zklock run --help lists the options)\n"},
        {{"fence", "check", "--tokn=5", "/tmp/r"},
         "zklock: unknown option '--tokn'; did you mean '--token'? (zklock fence check --help lists the options)\n"},
        {{"status", "--frobnicate", "/x"},
         "zklock: unknown option '--frobnicate' (zklock status --help lists the options)\n"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto name = "unknown" + std::to_string(i);
        auto p = cli.start(cases[i].first, name);
        EXPECT_EQ(exit_code(p), 64) << cli.output(name);
        EXPECT_EQ(cli.output(name), cases[i].second);
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
}

// run and elect both refuse a command without its "--", and say how to write
// it: a word after the lock path could be CMD or one more lock path.
TEST(CliUsageTest, RunAndElectRefuseACommandWithoutItsSeparator) {
    Cli cli;
    const auto refused = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port());
    const auto marker = cli.file("ran");
    auto run = cli.start({"run", "-c", refused, "/locks/x", "touch", marker.string()}, "run");
    EXPECT_EQ(exit_code(run), 64) << cli.output("run");
    EXPECT_TRUE(contains(cli.output("run"), "zklock: run: CMD goes after --: zklock run /locks/x -- touch " +
                                                marker.string()))
        << cli.output("run");
    auto two = cli.start({"run", "-c", refused, "/locks/a", "/locks/b", "touch", marker.string()}, "two");
    EXPECT_EQ(exit_code(two), 64) << cli.output("two");
    EXPECT_TRUE(contains(cli.output("two"), "zklock run /locks/a -- /locks/b touch")) << cli.output("two");
    auto elect = cli.start({"elect", "-c", refused, "/e", "touch", marker.string()}, "elect");
    EXPECT_EQ(exit_code(elect), 64) << cli.output("elect");
    EXPECT_TRUE(contains(cli.output("elect"), "elect: CMD goes after --")) << cli.output("elect");
    EXPECT_FALSE(std::filesystem::exists(marker));
    // With it, run gets past its arguments to the connect (69: nothing listens there).
    auto with = cli.start({"run", "-c", refused, "--connect-timeout", "300ms", "/locks/x", "--", "true"}, "with");
    EXPECT_EQ(exit_code(with), 69) << cli.output("with");
}

// flock's -x and -o are taken (what zklock does anyway); its -c CMD, which is
// zklock's connect string, gets a pointer to -- sh -c CMD, before or after the
// lock path, and nothing runs.
TEST(CliHabitsTest, FlocksExclusiveAndCloseAreTakenAndItsCommandOptionIsPointedToShC) {
    Cli cli;
    const auto refused = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port());
    const auto marker = cli.file("ran");
    auto x = cli.start({"run", "-x", "-o", "-c", refused, "--connect-timeout", "300ms", "/x", "--", "touch",
                        marker.string()},
                       "x");
    EXPECT_EQ(exit_code(x), 69) << cli.output("x");
    auto xs = cli.start({"run", "-x", "-s", "/x", "--", "true"}, "xs");
    EXPECT_EQ(exit_code(xs), 64) << cli.output("xs");

    const std::string make = "make -j2 all";
    auto after = cli.start({"run", "/x", "-c", make}, "after");
    EXPECT_EQ(exit_code(after), 64) << cli.output("after");
    EXPECT_TRUE(contains(cli.output("after"), "-c is the ZooKeeper connect string (host:port,...), not a command: "
                                              "for flock's -c 'make -j2 all' write "
                                              "zklock run /x -- sh -c 'make -j2 all'"))
        << cli.output("after");
    for (const auto& before : {std::vector<std::string>{"run", "-c", make, "/x", "--", "true"},
                               std::vector<std::string>{"lock", "-c", make, "/x"}}) {
        const auto name = "before-" + before[0];
        auto p = cli.start(before, name);
        EXPECT_EQ(exit_code(p), 64) << cli.output(name);
        EXPECT_TRUE(contains(cli.output(name), "write zklock run LOCK_PATH -- sh -c 'make -j2 all'")) << cli.output(name);
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
}

// A 5,000-byte lock path, command name or connect string is not echoed whole:
// every message quotes at most a line's worth of it, cut with an ellipsis.
TEST(CliUsageTest, LongInputIsCutToALineInEveryMessage) {
    Cli cli;
    const std::string path = "/" + std::string(5000, 'p');
    const std::vector<std::vector<std::string>> runs{
        {"run", "-c", "127.0.0.1:1", path, "--", "true"},
        {"status", "-c", "127.0.0.1:1", path},
        {"elect", "-c", "127.0.0.1:1", path, "--", "true"},
        {std::string(5000, 'r')},
        {"status", "-c", std::string(5000, 'h'), "/x"},
        {"run", "-c", "127.0.0.1:1", "-w", std::string(5000, '7') + "x", "/x", "--", "true"},
    };
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto name = "long" + std::to_string(i);
        auto p = cli.start(runs[i], name);
        EXPECT_EQ(exit_code(p), 64) << cli.output(name).substr(0, 300);
        const auto out = cli.output(name);
        EXPECT_TRUE(contains(out, "\u2026")) << out.substr(0, 300);
        for (const auto& line : complete_lines(cli.output_path(name)))
            EXPECT_LT(line.size(), 160u) << line.substr(0, 300);
    }
}

// elect's command goes after --: without it, its first word would be taken
// for the ID (and the rest run as the command), so that is refused.
TEST(CliUsageTest, ElectRefusesACommandWithoutItsSeparator) {
    Cli cli;
    const auto marker = cli.file("ran");
    auto without_id = cli.start({"elect", "-c", "127.0.0.1:1", "/e", "touch", marker.string()}, "without-id");
    EXPECT_EQ(exit_code(without_id), 64) << cli.output("without-id");
    EXPECT_TRUE(contains(cli.output("without-id"), "zklock: elect: CMD goes after -- (zklock elect ELECTION_PATH [ID] "
                                                   "-- CMD [ARGS...]); without it 'touch' would be the ID"))
        << cli.output("without-id");
    auto with_id = cli.start({"elect", "-c", "127.0.0.1:1", "/e", "id", "touch", marker.string()}, "with-id");
    EXPECT_EQ(exit_code(with_id), 64) << cli.output("with-id");
    EXPECT_TRUE(contains(cli.output("with-id"), "without it 'id' would be the ID and 'touch' the command"))
        << cli.output("with-id");
    EXPECT_FALSE(std::filesystem::exists(marker));
}

// bench's scenarios and its zookeeper backend say "connection refused" as the
// other commands do, without the library's ": deadline passed" after it. No
// warm-up: it would connect first, through the uncontended scenario's code.
TEST(CliConnectTest, EveryBenchScenarioCallsARefusedServerSo) {
    Cli cli;
    const auto refused = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port());
    const std::vector<std::string> common{"bench", "-c", refused, "--connect-timeout", "300ms", "--warmup", "0",
                                          "--ops", "5"};
    const auto runs = every_bench_scenario();
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto name = "bench" + std::to_string(i);
        auto p = cli.start(plus(common, runs[i]), name);
        EXPECT_EQ(exit_code(p), 69) << cli.output(name);
        EXPECT_TRUE(contains(cli.output(name), "within 300 ms: " + refused + ": connection refused")) << cli.output(name);
        EXPECT_FALSE(contains(cli.output(name), "deadline passed")) << cli.output(name);
    }
}

// The scenarios of ZooKeeper's recipes alone are refused with --backend (and
// with --report, which without --backend means the zookeeper backend): they
// would measure nothing.
TEST(CliBenchRefusalTest, ZookeeperOnlyScenariosAreRefusedWithABackend) {
    Cli cli;
    for (const std::string scenario : {"locks", "waiters", "mixed", "multi"}) {
        auto p = cli.start({"bench", "--backend", "zookeeper", "--scenario", scenario}, scenario);
        EXPECT_EQ(exit_code(p), 64) << cli.output(scenario);
        EXPECT_TRUE(contains(cli.output(scenario), "--scenario " + scenario + " measures")) << cli.output(scenario);
        EXPECT_TRUE(contains(cli.output(scenario), "not --backend")) << cli.output(scenario);
    }
    auto report = cli.start({"bench", "--scenario", "waiters", "--report", cli.file("r").string()}, "report");
    EXPECT_EQ(exit_code(report), 64) << cli.output("report");
    EXPECT_TRUE(contains(cli.output("report"), "--scenario waiters measures")) << cli.output("report");
    EXPECT_TRUE(contains(cli.output("report"), "not --report")) << cli.output("report");
}

// help describes a command's subcommand (zklock help fence check); a bare
// zklock prints what `zklock help` prints, on stderr, and exits 64.
TEST(CliHelpTest, HelpDescribesSubcommandsAndABareZklockPrintsTheUsage) {
    Cli cli;
    auto check = cli.start({"help", "fence", "check"}, "check");
    EXPECT_EQ(exit_code(check), 0) << cli.output("check");
    EXPECT_TRUE(contains(cli.output("check"), "Usage: zklock fence check")) << cli.output("check");
    EXPECT_TRUE(contains(cli.output("check"), "--token")) << cli.output("check");
    auto write = cli.start({"help", "fence", "write"}, "write");
    EXPECT_EQ(exit_code(write), 0) << cli.output("write");
    EXPECT_TRUE(contains(cli.output("write"), "Usage: zklock fence write")) << cli.output("write");
    auto unknown = cli.start({"help", "fence", "nosuch"}, "unknown");
    EXPECT_EQ(exit_code(unknown), 64) << cli.output("unknown");
    EXPECT_TRUE(contains(cli.output("unknown"), "zklock fence has no subcommand 'nosuch' (subcommands: check, write)"))
        << cli.output("unknown");

    auto help = cli.start({"help"}, "help");
    EXPECT_EQ(exit_code(help), 0) << cli.output("help");
    auto bare = cli.start({}, "bare");
    EXPECT_EQ(exit_code(bare), 64) << cli.output("bare");
    EXPECT_EQ(cli.output("bare"), cli.output("help"));
    EXPECT_TRUE(contains(cli.output("bare"), "Usage: zklock")) << cli.output("bare");
    // All of it on stderr: with stderr gone, nothing is left.
    auto quiet = cli.start_via({"sh", "-c", "exec \"$@\" 2>/dev/null", "sh"}, {}, "quiet");
    EXPECT_EQ(exit_code(quiet), 64) << cli.output("quiet");
    EXPECT_EQ(cli.output("quiet"), "");
}

// `bench --report` with one scenario draws that scenario's chart and no other,
// and the report has no section for the scenarios that did not run.
TEST(CliBenchReportTest, OneScenarioDrawsItsChartAlone) {
    Cli cli;
    const auto dir = cli.file("report");
    auto p = cli.start({"bench", "--backend", "flock", "--flock-dir", cli.dir().string(), "--scenario", "uncontended",
                        "--ops", "20", "--warmup", "0", "--report", dir.string()},
                       "bench");
    EXPECT_EQ(exit_code(p, 120s), 0) << cli.output("bench");
    EXPECT_TRUE(std::filesystem::exists(dir / "latency.svg")) << cli.output("bench");
    EXPECT_FALSE(std::filesystem::exists(dir / "contended.svg"));
    const auto md = read_file(dir / "results.md");
    EXPECT_FALSE(contains(md, "contended.svg"));
    EXPECT_TRUE(contains(md, "## Uncontended")) << md;
    EXPECT_FALSE(contains(md, "## Contended")) << md;
    EXPECT_FALSE(contains(md, "## Acquisitions/s against clients")) << md;
}

// --- against a server --------------------------------------------------------------

TEST_F(CliConventionsTest, ConflictExitCodeIsTheStatusOfABusyLock) {
    const auto path = lock_path();
    auto s = connect();
    Mutex held(*s, path);
    held.lock();
    const auto marker = cli_.file("ran");
    auto n = cli_.start(plus(run_args(path, {"-n", "-E", "3"}), {"touch", marker.string()}), "n");
    EXPECT_EQ(exit_code(n), 3) << cli_.output("n");
    auto w = cli_.start(plus(run_args(path, {"-w", "200", "--conflict-exit-code", "0"}), {"touch", marker.string()}),
                        "w");
    EXPECT_EQ(exit_code(w), 0) << cli_.output("w");
    EXPECT_TRUE(contains(cli_.output("w"), "not acquired within 200 ms")) << cli_.output("w");
    EXPECT_FALSE(std::filesystem::exists(marker));
    auto out_of_range = cli_.start(plus(run_args(path, {"-n", "-E", "256"}), {"true"}), "range");
    EXPECT_EQ(exit_code(out_of_range), 64) << cli_.output("range");
    EXPECT_EQ(queue_length(path), 1u);
    held.unlock();
}

TEST_F(CliConventionsTest, LockHoldsUntilSigtermPrintingNodeAndTokenAndStatusShowsItsName) {
    const auto path = lock_path();
    auto p = cli_.start({"lock", "-c", server_->connect_string(), "--name", "billing-7", path}, "lock");
    ASSERT_TRUE(wait_until([&] { return complete_lines(cli_.output_path("lock")).size() >= 2; }, 30s))
        << cli_.output("lock");
    const auto lines = complete_lines(cli_.output_path("lock"));
    auto observer = connect();
    const auto queue = list_contenders(*observer, path);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(lines[0], "ZKLOCK_LOCK_NODE=" + path + "/" + queue[0].node);
    EXPECT_EQ(lines[1], "ZKLOCK_FENCING_TOKEN=" + std::to_string(queue[0].fencing_token));
    EXPECT_EQ(queue[0].data, "billing-7");

    auto text = cli_.start({"status", "-c", server_->connect_string(), path}, "status");
    EXPECT_EQ(exit_code(text), 0) << cli_.output("status");
    const auto table = complete_lines(cli_.output_path("status"));
    ASSERT_EQ(table.size(), 3u) << cli_.output("status");
    EXPECT_EQ(table[1].substr(table[1].rfind(' ') + 1), "OWNER") << table[1];
    EXPECT_EQ(table[2].substr(table[2].size() - std::string("billing-7").size()), "billing-7") << table[2];
    auto json = cli_.start({"status", "--json", "-c", server_->connect_string(), path}, "json");
    EXPECT_EQ(exit_code(json), 0) << cli_.output("json");
    EXPECT_EQ(nlohmann::json::parse(cli_.output("json")).at("contenders").at(0).at("owner"), "billing-7");

    auto busy = cli_.start(plus(run_args(path, {"-n"}), {"true"}), "busy");
    EXPECT_EQ(exit_code(busy), 75) << cli_.output("busy");
    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), 0) << cli_.output("lock");
    EXPECT_EQ(queue_length(path), 0u);
}

// --report without --backend: the zookeeper backend's report of the scenarios asked for.
TEST_F(CliConventionsTest, ReportWithoutABackendChartsTheZookeeperScenariosAsked) {
    for (const std::string scenario : {"contended", "uncontended"}) {
        const auto dir = cli_.file("report-" + scenario);
        auto p = cli_.start({"bench", "-c", server_->connect_string(), "--scenario", scenario, "--clients", "2",
                             "--ops", "20", "--warmup", "0", "--report", dir.string()},
                            scenario);
        ASSERT_EQ(exit_code(p, 120s), 0) << cli_.output(scenario);
        const auto md = read_file(dir / "results.md");
        const auto results = nlohmann::json::parse(read_file(dir / "results.json")).at("results");
        ASSERT_FALSE(results.empty());
        for (const auto& r : results) {
            EXPECT_EQ(r.at("backend"), "zookeeper") << r;
            EXPECT_EQ(r.at("scenario"), scenario) << r;
        }
        const bool contended = scenario == "contended";
        EXPECT_EQ(std::filesystem::exists(dir / "contended.svg"), contended) << cli_.output(scenario);
        EXPECT_EQ(std::filesystem::exists(dir / "latency.svg"), !contended) << cli_.output(scenario);
        EXPECT_FALSE(std::filesystem::exists(dir / "separate.svg"));
        EXPECT_EQ(contains(md, "## Contended: 2 clients on one lock"), contended) << md;
        EXPECT_EQ(contains(md, "## Uncontended"), !contended) << md;
        EXPECT_FALSE(contains(md, "separate locks")) << md;
    }
}

// A missing chroot is called so by every bench scenario, as by run and status.
TEST_F(CliConventionsTest, BenchNamesAMissingChrootInEveryScenario) {
    const std::string chroot = "/no-such-chroot";
    const std::vector<std::string> common{"bench", "-c", server_->connect_string() + chroot, "--warmup", "0",
                                          "--ops", "5"};
    const auto runs = every_bench_scenario();
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto name = "bench" + std::to_string(i);
        auto p = cli_.start(plus(common, runs[i]), name);
        EXPECT_EQ(exit_code(p, 60s), 78) << cli_.output(name);
        EXPECT_TRUE(contains(cli_.output(name), "the chroot " + chroot + " of the connect string does not exist"))
            << cli_.output(name);
    }
}

// status says which contenders hold: the readers ahead of a read-write lock's
// first writer, the first K of a semaphore of K permits.
TEST_F(CliConventionsTest, StatusShowsEveryHolderOfAReadWriteLockAndOfASemaphore) {
    const auto connect_to = server_->connect_string();
    auto s = connect();
    const auto rw = lock_path("rw");
    SharedMutex r1(*s, rw), r2(*s, rw);
    r1.lock_shared();
    r2.lock_shared();
    auto writer = cli_.start({"lock", "-c", connect_to, rw}, "writer");
    ASSERT_TRUE(wait_until([&] { return queue_length(rw) == 3; }, 30s)) << cli_.output("writer");
    auto reader = cli_.start({"lock", "-c", connect_to, "--shared", rw}, "reader");
    ASSERT_TRUE(wait_until([&] { return queue_length(rw) == 4; }, 30s)) << cli_.output("reader");

    const auto sem = lock_path("sem");
    Semaphore two(*s, sem, 2);
    auto first = two.permit();
    first.lock();
    auto second = two.permit();
    second.lock();
    auto third = cli_.start({"lock", "-c", connect_to, "--permits", "2", sem}, "third");
    ASSERT_TRUE(wait_until([&] { return queue_length(sem) == 3; }, 30s)) << cli_.output("third");

    auto text = cli_.start({"status", "-c", connect_to, rw, sem}, "status");
    EXPECT_EQ(exit_code(text), 0) << cli_.output("status");
    EXPECT_TRUE(contains(cli_.output("status"), rw + ": 4 contenders (positions 0 and 1 hold the read-write lock: the "
                                                      "readers ahead of the first writer)"))
        << cli_.output("status");
    EXPECT_TRUE(contains(cli_.output("status"),
                         sem + ": 3 contenders (a semaphore of 2 permits: positions 0 and 1 hold one each)"))
        << cli_.output("status");
    auto json = cli_.start({"status", "--json", "-c", connect_to, rw, sem}, "json");
    EXPECT_EQ(exit_code(json), 0) << cli_.output("json");
    const auto both = nlohmann::json::parse(cli_.output("json"));
    const auto holds = [](const nlohmann::json& queue) {
        std::vector<bool> out;
        for (const auto& c : queue.at("contenders")) out.push_back(c.at("holds").get<bool>());
        return out;
    };
    EXPECT_EQ(holds(both.at(0)), (std::vector<bool>{true, true, false, false})) << both;
    EXPECT_FALSE(both.at(0).contains("permits")) << both;
    EXPECT_EQ(holds(both.at(1)), (std::vector<bool>{true, true, false})) << both;
    EXPECT_EQ(both.at(1).at("permits"), 2) << both;

    for (auto* waiting : {&reader, &writer, &third}) {  // the reader first: without the writer it would hold
        ASSERT_TRUE(waiting->signal(SIGTERM));
        EXPECT_EQ(exit_code(*waiting), 128 + SIGTERM);
    }
    r1.unlock_shared();
    r2.unlock_shared();
    first.unlock();
    second.unlock();
}

// A semaphore of one permit is "the only permit", not "all 1 permits".
TEST_F(CliConventionsTest, ABusySemaphoreOfOnePermitIsSaidInTheSingular) {
    const auto path = lock_path();
    auto s = connect();
    Semaphore one(*s, path, 1);
    auto lease = one.permit();
    lease.lock();
    auto p = cli_.start(plus(run_args(path, {"--permits", "1", "-n", "-v"}), {"true"}), "busy");
    EXPECT_EQ(exit_code(p), 75) << cli_.output("busy");
    EXPECT_TRUE(contains(cli_.output("busy"), "the only permit of " + path + " is held by another")) << cli_.output("busy");
    EXPECT_TRUE(contains(cli_.output("busy"), "a permit of " + path + " (1 permit)")) << cli_.output("busy");
    EXPECT_FALSE(contains(cli_.output("busy"), "1 permits")) << cli_.output("busy");
    lease.unlock();
}

// Started with SIGINT ignored (a background job of a script: `zklock lock PATH &`),
// zklock lock keeps it ignored, as POSIX shells and nohup mean it, and SIGTERM
// releases the lock. SIGINT is sent first: were it handled, it would be the
// signal that released (signalfd gives the lowest pending signal first).
TEST_F(CliConventionsTest, LockStartedWithSigintIgnoredKeepsItIgnoredAndStopsOnSigterm) {
    const auto path = lock_path();
    auto p = cli_.start_via({"sh", "-c", "trap '' INT; exec \"$@\"", "sh"},
                            {"lock", "-v", "-c", server_->connect_string(), path}, "lock");
    ASSERT_TRUE(wait_until([&] { return contains(cli_.output("lock"), "ZKLOCK_FENCING_TOKEN="); }, 30s))
        << cli_.output("lock");
    ASSERT_TRUE(wait_until([&] { return cli_.output("lock").ends_with("\n"); }, 30s)) << cli_.output("lock");
    ASSERT_TRUE(p.signal(SIGINT));
    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), 0) << cli_.output("lock");
    EXPECT_TRUE(contains(cli_.output("lock"), "SIGTERM: releasing lock " + path)) << cli_.output("lock");
    EXPECT_FALSE(contains(cli_.output("lock"), "SIGINT")) << cli_.output("lock");
    EXPECT_EQ(queue_length(path), 0u);
}

TEST_F(CliConventionsTest, SharedRunHoldsBesideReadersAndNotBesideAWriter) {
    const auto path = lock_path();
    auto s = connect();
    SharedMutex reader(*s, path);
    reader.lock_shared();
    const auto node_file = cli_.file("node");
    auto shared = cli_.start(plus(run_args(path, {"--shared", "-n"}),
                                  {"sh", "-c", "echo \"$ZKLOCK_LOCK_NODE\" > \"$0\"", node_file.string()}),
                             "shared");
    EXPECT_EQ(exit_code(shared), 0) << cli_.output("shared");
    EXPECT_TRUE(contains(read_file(node_file), "-read-")) << read_file(node_file);
    auto exclusive = cli_.start(plus(run_args(path, {"-n"}), {"true"}), "exclusive");
    EXPECT_EQ(exit_code(exclusive), 75) << cli_.output("exclusive");
    reader.unlock_shared();

    SharedMutex writer(*s, path);
    writer.lock();
    auto behind_writer = cli_.start(plus(run_args(path, {"-s", "-n"}), {"true"}), "behind");
    EXPECT_EQ(exit_code(behind_writer), 75) << cli_.output("behind");
    writer.unlock();
    auto with_permits = cli_.start(plus(run_args(path, {"-s", "--permits", "2"}), {"true"}), "permits");
    EXPECT_EQ(exit_code(with_permits), 64) << cli_.output("permits");
}

} // namespace
