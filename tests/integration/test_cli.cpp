// The zklock command-line tool, run as a separate process against real servers.
#include "process_support.hpp"
#include "silent_listener.hpp"
#include "test_cli_support.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/redis_server.hpp>

#include <boost/asio/use_future.hpp>

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using namespace zklock;
using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

// --- run ---------------------------------------------------------------------------

TEST_F(CliTest, RunExportsNodeAndTokenAndExitsWithCommandStatus) {
    const auto path = lock_path();
    std::int64_t previous_token = 0;
    for (int round = 0; round < 2; ++round) {
        const auto env_file = cli_.file("env" + std::to_string(round));
        auto p = cli_.start(plus(run_args(path), {"sh", "-c",
                                                  "echo \"$ZKLOCK_LOCK_NODE $ZKLOCK_FENCING_TOKEN\" > \"$0\"; exit 3",
                                                  env_file.string()}));
        EXPECT_EQ(exit_code(p), 3) << cli_.output();
        std::istringstream env(read_file(env_file));
        std::string node;
        std::int64_t token = 0;
        env >> node >> token;
        EXPECT_EQ(node.rfind(path + "/_c_", 0), 0u) << node;
        EXPECT_GT(token, previous_token) << "fencing tokens grow across holders";
        previous_token = token;
        // zklock waits for the delete to commit before it exits.
        EXPECT_EQ(queue_length(path), 0u);
    }
}

TEST_F(CliTest, RunReportsMissingCommandWith127AndReleases) {
    const auto path = lock_path();
    auto p = cli_.start(plus(run_args(path), {"zklock-no-such-command"}));
    EXPECT_EQ(exit_code(p), 127);
    EXPECT_NE(cli_.output().find("zklock-no-such-command"), std::string::npos) << cli_.output();
    EXPECT_EQ(queue_length(path), 0u);
}

// The busy message names the holder as zklock status does in OWNER.
TEST_F(CliTest, NonblockWhileHeldExits75WithoutRunningCommandNamingTheHolder) {
    const auto path = lock_path();
    auto s = connect();
    MutexOptions named;
    named.node_data = "billing-7";
    Mutex held(*s, path, named);
    held.lock();
    const auto marker = cli_.file("ran");
    auto p = cli_.start(plus(run_args(path, {"-n"}), {"touch", marker.string()}));
    EXPECT_EQ(exit_code(p), 75) << cli_.output();
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_NE(cli_.output().find("zklock: lock " + path + " is held by someone else (holder: billing-7)\n"),
              std::string::npos)
        << cli_.output();
    EXPECT_EQ(queue_length(path), 1u);
    held.unlock();
}

TEST_F(CliTest, TimeoutWhileHeldExits75AndLeavesNoNode) {
    const auto path = lock_path();
    auto s = connect();
    Mutex held(*s, path);
    held.lock();
    const auto marker = cli_.file("ran");
    auto p = cli_.start(plus(run_args(path, {"-w", "300"}), {"touch", marker.string()}));
    EXPECT_EQ(exit_code(p), 75) << cli_.output();
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_NE(cli_.output().find("not acquired within 300 ms"), std::string::npos) << cli_.output();
    EXPECT_EQ(queue_length(path), 1u);
    held.unlock();
}

TEST_F(CliTest, KilledHolderReleasesWithinSessionTimeoutAndTakesItsCommandAlong) {
    const auto path = lock_path();
    const auto pid_file = cli_.file("pid");
    auto p = cli_.start(plus(run_args(path, {"--session-timeout", "2000"}),
                             {"sh", "-c", "echo $$ > \"$0\"; exec sleep 1000", pid_file.string()}));
    const pid_t command = std::stoi(wait_for_line(pid_file));
    auto s = connect();
    Mutex waiter(*s, path);
    ASSERT_EQ(::kill(p.pid(), SIGKILL), 0);
    // Correctness bound: the session (2 s) expires, the server deletes the node.
    EXPECT_TRUE(waiter.try_lock_for(3s));
    // PR_SET_PDEATHSIG: the command does not outlive the lock's session.
    EXPECT_TRUE(wait_until([&] { return process_gone(command); }, 10s));
    p.kill9();  // the whole process group, whatever is left of it
    EXPECT_TRUE(process_gone(command));
    waiter.unlock();
}

TEST_F(CliTest, LockLostWhileCommandRunsStopsItAndExits76) {
    const auto path = lock_path();
    const auto pid_file = cli_.file("pid");
    const auto node_file = cli_.file("node");
    auto p = cli_.start(plus(run_args(path),
                             {"sh", "-c", "echo $ZKLOCK_LOCK_NODE > \"$1\"; echo $$ > \"$0\"; exec sleep 1000",
                              pid_file.string(), node_file.string()}));
    const pid_t command = std::stoi(wait_for_line(pid_file));
    const auto node = wait_for_line(node_file);
    auto s = connect();
    zklock::testing::delete_node(*s, node);
    EXPECT_EQ(exit_code(p), 76) << cli_.output();
    // Plain words of a ZooKeeper run: no nested parentheses, no other backend.
    EXPECT_NE(cli_.output().find("zklock: lock lost: another client deleted the lock node; stopping the command\n"),
              std::string::npos)
        << cli_.output();
    EXPECT_TRUE(wait_until([&] { return process_gone(command); }, 10s));
    EXPECT_EQ(queue_length(path), 0u);
}

// zklock paused (SIGSTOP) past its session timeout while its command runs and
// finishes: when zklock resumes it may see the command's exit before the
// session's expiry. Either way the lock was lost while the command ran: 76,
// and the reason is the expired session.
TEST_F(CliTest, PausedPastTheSessionTimeoutWhileTheCommandFinishesExits76) {
    auto observer = connect();
    for (const bool permits : {false, true}) {
        SCOPED_TRACE(permits ? "--permits 2" : "lock");
        const auto path = lock_path(permits ? "permits" : "lock");
        const auto pid_file = cli_.file(permits ? "pid-permits" : "pid");
        const auto go = cli_.file(permits ? "go-permits" : "go");
        const std::string name = permits ? "permits" : "lock";
        std::vector<std::string> options{"--session-timeout", "1000"};
        if (permits) options.insert(options.end(), {"--permits", "2"});
        auto p = cli_.start(plus(run_args(path, options),
                                 {"sh", "-c", "echo $$ > \"$0\"; while [ ! -e \"$1\" ]; do sleep 0.05; done",
                                  pid_file.string(), go.string()}),
                            name);
        const pid_t command = std::stoi(wait_for_line(pid_file));
        ASSERT_EQ(::kill(p.pid(), SIGSTOP), 0);
        EXPECT_TRUE(wait_until([&] { return list_contenders(*observer, path).empty(); }, 20s))
            << "the server never expired the paused zklock's session";
        std::ofstream(go.string()) << "go\n";
        EXPECT_TRUE(wait_until([&] { return process_gone(command); }, 10s));  // exited, while zklock is stopped
        ASSERT_EQ(::kill(p.pid(), SIGCONT), 0);
        EXPECT_EQ(exit_code(p), 76) << cli_.output(name);
        // The loss is the session's, told by whichever verdict zklock reaches first
        // after SIGCONT: the server's (it answers the reconnect with "expired"),
        // the client's own clock (nothing heard for a session timeout, the
        // --session-timeout rule), or the safe-time budget run out ("no longer
        // certainly held", counted from the last answer heard). Never another
        // client's deletion.
        const auto out = cli_.output(name);
        const bool lost = out.find(permits ? "permit lost" : "lock lost") != std::string::npos;
        const bool budget = out.find(std::string(permits ? "permit" : "lock") +
                                     " no longer certainly held: nothing heard from ZooKeeper for the session "
                                     "timeout") != std::string::npos;
        EXPECT_TRUE(lost || budget) << out;
        if (lost) {
            EXPECT_TRUE(out.find(": the ZooKeeper session expired") != std::string::npos ||
                        out.find(": the connection was lost for longer than the session timeout") != std::string::npos)
                << out;
        }
        // Neither zklock run's words for a deletion (cli::loss_reason) nor the
        // library's (errc::node_deleted's message) may reach the output.
        EXPECT_EQ(out.find("another client deleted the"), std::string::npos) << out;
        EXPECT_EQ(out.find("deleted by another client"), std::string::npos) << out;
    }
}

TEST_F(CliTest, SigtermWhileWaitingExits143AndLeavesNoNode) {
    const auto path = lock_path();
    auto s = connect();
    Mutex held(*s, path);
    held.lock();
    const auto marker = cli_.file("ran");
    auto p = cli_.start(plus(run_args(path), {"touch", marker.string()}));
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; })) << cli_.output();
    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), 143) << cli_.output();
    EXPECT_EQ(queue_length(path), 1u);
    EXPECT_FALSE(std::filesystem::exists(marker));
    held.unlock();
}

TEST_F(CliTest, SigtermWhileCommandRunsIsForwardedThenReleases) {
    const auto path = lock_path();
    const auto pid_file = cli_.file("pid");
    auto p = cli_.start(
        plus(run_args(path), {"sh", "-c", "echo $$ > \"$0\"; exec sleep 1000", pid_file.string()}));
    const pid_t command = std::stoi(wait_for_line(pid_file));
    ASSERT_EQ(::kill(p.pid(), SIGTERM), 0);  // zklock only, not its process group
    EXPECT_EQ(exit_code(p), 143) << cli_.output();
    EXPECT_TRUE(wait_until([&] { return process_gone(command); }, 10s));
    EXPECT_EQ(queue_length(path), 0u);
}

TEST_F(CliTest, ServerDownExits69WithinTheWaitDeadline) {
    const auto port = zklock::testing::free_loopback_port();
    const auto connect_to = "127.0.0.1:" + std::to_string(port);
    const auto marker = cli_.file("ran");
    auto p = cli_.start({"run", "-c", connect_to, "-w", "500", "/zklock-tests/down", "--", "touch", marker.string()});
    EXPECT_EQ(exit_code(p, 10s), 69) << cli_.output();
    EXPECT_NE(cli_.output().find("could not connect to " + connect_to + " within 500 ms"), std::string::npos)
        << cli_.output();
    EXPECT_FALSE(std::filesystem::exists(marker));

    auto st = cli_.start({"status", "-c", connect_to, "--connect-timeout", "500", "/zklock-tests/down"}, "status");
    EXPECT_EQ(exit_code(st, 10s), 69) << cli_.output("status");
    EXPECT_NE(cli_.output("status").find("could not connect"), std::string::npos) << cli_.output("status");
}

// zklock lock stops on SIGHUP too, as its help (and the README) says.
TEST_F(CliTest, LockReleasesOnSighupAsItsHelpSays) {
    auto help = cli_.start({"help", "lock"}, "help");
    EXPECT_EQ(exit_code(help), 0) << cli_.output("help");
    const auto description = cli_.output("help").substr(0, cli_.output("help").find('\n'));
    EXPECT_EQ(description, "Hold LOCK_PATH until SIGINT, SIGTERM or SIGHUP (as etcdctl lock NAME)");

    const auto path = lock_path();
    auto p = cli_.start({"lock", "-c", server_->connect_string(), path}, "lock");
    ASSERT_TRUE(wait_until([&] { return complete_lines(cli_.output_path("lock")).size() >= 2; }, 30s))
        << cli_.output("lock");
    ASSERT_TRUE(p.signal(SIGHUP));
    EXPECT_EQ(exit_code(p), 0) << cli_.output("lock");
    EXPECT_EQ(queue_length(path), 0u);
}

TEST_F(CliTest, SigintWhileConnectingExits130) {
    SilentListener silent;  // the connect waits out its deadline there
    const auto& connect_to = silent.address();
    const auto marker = cli_.file("ran");
    auto p = cli_.start({"run", "-v", "-c", connect_to, "/zklock-tests/down", "--", "touch", marker.string()});
    ASSERT_TRUE(wait_until([&] { return cli_.output().find("connecting to") != std::string::npos; }))
        << cli_.output();
    ASSERT_TRUE(p.signal(SIGINT));
    EXPECT_EQ(exit_code(p, 10s), 130) << cli_.output();
    EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(CliUsageTest, InvalidLockPathExits64NamingTheProblem) {
    Cli cli;
    const auto marker = cli.file("ran");
    const std::vector<std::pair<std::string, std::string>> cases{{"relative/x", "absolute"},
                                                                 {"/a//b", "empty segment"}};
    for (const auto& [path, problem] : cases) {
        // The path is checked before any connection attempt.
        auto p = cli.start({"run", "-c", "127.0.0.1:1", path, "--", "touch", marker.string()}, "run");
        EXPECT_EQ(exit_code(p), 64) << path;
        auto st = cli.start({"status", "-c", "127.0.0.1:1", path}, "status");
        EXPECT_EQ(exit_code(st), 64) << path;
    }
    for (const auto& name : {"run", "status"}) {
        const auto out = cli.output(name);
        EXPECT_NE(out.find("relative/x"), std::string::npos) << out;
        EXPECT_NE(out.find("absolute"), std::string::npos) << out;
        EXPECT_NE(out.find("/a//b"), std::string::npos) << out;
        EXPECT_NE(out.find("empty segment"), std::string::npos) << out;
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
}

// --- write (guarded transactions) -------------------------------------------------

// A command under `zklock run` writes through `zklock write` while the lock is
// held; once the lock's node is gone, nothing of a write is applied (76).
TEST_F(CliTest, WriteCommitsUnderRunAndNothingOnceTheLockIsGone) {
    const auto path = lock_path();
    auto s = connect();
    const std::string dir = "/zklock-tests/" + node_name(path.substr(0, path.rfind('/'))) + "-data";
    try {
        zklock::testing::create_node(*s, "/zklock-tests");
    } catch (const error&) {  // made by an earlier test
    }
    zklock::testing::create_node(*s, dir);
    const std::string connect = server_->connect_string();
    auto p = cli_.start(plus(run_args(path), {"sh", "-c",
                                              "printf from-stdin | \"$0\" write -c \"$1\" create \"$2/state\" v1 "
                                              "set:0 \"$2/state\" - && \"$0\" write -c \"$1\" sequential \"$2/log-\" x",
                                              ZKLOCK_CLI_PATH, connect, dir}));
    EXPECT_EQ(exit_code(p), 0) << cli_.output();
    EXPECT_NE(cli_.output().find(dir + "/log-"), std::string::npos) << cli_.output();
    EXPECT_EQ(list_queue(*s, dir).foreign.size(), 2u);

    // The node of a hold that ended: refused, nothing written.
    const std::string gone = path + "/_c_00000000-0000-0000-0000-000000000000-lock-0000000001";
    auto late = cli_.start({"write", "-c", connect, "--node", gone, "create", dir + "/late", "x", "delete", dir + "/state"},
                           "late");
    EXPECT_EQ(exit_code(late), 76) << cli_.output("late");
    EXPECT_NE(cli_.output("late").find("no longer held"), std::string::npos) << cli_.output("late");
    EXPECT_EQ(list_queue(*s, dir).foreign.size(), 2u);

    // Without a node to guard with, and with words that are no operation: 64, nothing sent.
    auto bare = cli_.start({"write", "-c", connect, "create", dir + "/x", "1"}, "bare");
    EXPECT_EQ(exit_code(bare), 64) << cli_.output("bare");
    EXPECT_NE(cli_.output("bare").find("ZKLOCK_LOCK_NODE"), std::string::npos) << cli_.output("bare");
    auto bad = cli_.start({"write", "-c", connect, "--node", gone, "put", dir + "/x", "1"}, "bad");
    EXPECT_EQ(exit_code(bad), 64) << cli_.output("bad");
}

// --- revoke (cooperative revocation) ------------------------------------------------

// zklock run --revocable, asked to let go by zklock revoke LOCK_PATH, stops its
// command as on loss, releases the lock and exits 79. A holder that is not
// revocable (zklock lock) says so and keeps the lock, and zklock status shows
// the request pending on its node.
TEST_F(CliTest, RevokeEndsARevocableRunWith79AndAHolderThatIsNotRevocableKeepsTheLockWithTheRequestShown) {
    const auto path = lock_path();
    const std::string connect = server_->connect_string();
    const auto pid_file = cli_.file("pid");
    auto p = cli_.start(plus(run_args(path, {"--revocable"}),
                             {"sh", "-c", "echo $$ > \"$0\"; exec sleep 1000", pid_file.string()}));
    const pid_t command = std::stoi(wait_for_line(pid_file));
    auto revoke = cli_.start({"revoke", "-c", connect, path}, "revoke");
    EXPECT_EQ(exit_code(revoke), 0) << cli_.output("revoke");
    EXPECT_TRUE(contains(cli_.output("revoke"), path + "/_c_")) << cli_.output("revoke");
    EXPECT_EQ(exit_code(p), 79) << cli_.output();
    EXPECT_TRUE(contains(cli_.output(), "zklock: lock revoked: a revocation request asked the holder to let go "
                                        "(--revocable); stopping the command\n"))
        << cli_.output();
    EXPECT_TRUE(wait_until([&] { return process_gone(command); }, 10s));
    EXPECT_EQ(queue_length(path), 0u);
    // Nobody holds it now: nothing to ask, said so.
    auto nobody = cli_.start({"revoke", "-c", connect, path}, "nobody");
    EXPECT_EQ(exit_code(nobody), 0) << cli_.output("nobody");
    EXPECT_TRUE(contains(cli_.output("nobody"), "nobody holds " + path)) << cli_.output("nobody");

    // Not revocable: the request is noted, the lock kept, and status shows it.
    auto holder = cli_.start({"lock", "-c", connect, path}, "lock");
    const auto first = wait_for_line(cli_.output_path("lock"));
    ASSERT_EQ(first.rfind("ZKLOCK_LOCK_NODE=", 0), 0u) << first;
    const auto node = first.substr(std::string("ZKLOCK_LOCK_NODE=").size());
    auto by_node = cli_.start({"revoke", "-c", connect, node}, "by-node");
    EXPECT_EQ(exit_code(by_node), 0) << cli_.output("by-node");
    EXPECT_EQ(cli_.output("by-node"), node + "\n");
    EXPECT_TRUE(wait_until([&] { return contains(cli_.output("lock"), "without --revocable the lock is kept"); }))
        << cli_.output("lock");
    auto st = cli_.start({"status", "-c", connect, path}, "status");
    EXPECT_EQ(exit_code(st), 0) << cli_.output("status");
    EXPECT_TRUE(contains(cli_.output("status"), "[revocation requested]")) << cli_.output("status");
    EXPECT_TRUE(contains(cli_.output("status"), "note: revocation requested of position 0 (" + node +
                                                    "): a revocable holder lets go; one that is not keeps the lock"))
        << cli_.output("status");
    auto json = cli_.start({"status", "-c", connect, "--json", path}, "json");
    EXPECT_EQ(exit_code(json), 0) << cli_.output("json");
    EXPECT_TRUE(contains(cli_.output("json"), "\"revocation_requested\": true")) << cli_.output("json");
    EXPECT_EQ(queue_length(path), 1u);

    // Bad targets: no valid path (64), a node that does not exist (65).
    auto relative = cli_.start({"revoke", "-c", connect, "locks/x"}, "relative");
    EXPECT_EQ(exit_code(relative), 64) << cli_.output("relative");
    const std::string gone = path + "/_c_00000000-0000-0000-0000-000000000000-lock-0000000099";
    auto missing = cli_.start({"revoke", "-c", connect, gone}, "missing");
    EXPECT_EQ(exit_code(missing), 65) << cli_.output("missing");
    EXPECT_TRUE(contains(cli_.output("missing"), "does not exist")) << cli_.output("missing");

    holder.signal(SIGTERM);
    EXPECT_EQ(exit_code(holder), 0) << cli_.output("lock");
    EXPECT_EQ(queue_length(path), 0u);
}

// --- status ------------------------------------------------------------------------

// A mistyped path is not an idle lock: status says that it does not exist
// and exits 66 (--json: "exists": false); an existing lock nobody contends
// for has no contenders and exits 0; of several paths each is shown.
TEST_F(CliTest, StatusOfAMissingPathSaysSoWithItsOwnExitStatus) {
    const auto connect_string = server_->connect_string();
    const auto path = lock_path("idle");
    const auto missing = path + "-mistyped";
    auto text = cli_.start({"status", "-c", connect_string, missing}, "missing");
    EXPECT_EQ(exit_code(text), 66) << cli_.output("missing");
    EXPECT_EQ(cli_.output("missing"), missing + ": the lock path does not exist: nobody holds or waits for a lock "
                                                "there (mistyped? the server also removes the empty node of an "
                                                "idle lock)\n");
    auto json = cli_.start({"status", "-c", connect_string, "--json", missing}, "missing-json");
    EXPECT_EQ(exit_code(json), 66) << cli_.output("missing-json");
    const auto j = nlohmann::json::parse(cli_.output("missing-json"));
    EXPECT_EQ(j.at("exists"), false) << j;
    EXPECT_TRUE(j.at("contenders").empty()) << j;

    {
        auto s = connect();
        create_parents(*s, path);
        zklock::testing::create_node(*s, path);  // the lock's node, nobody in its queue
    }
    auto idle = cli_.start({"status", "-c", connect_string, path}, "idle");
    EXPECT_EQ(exit_code(idle), 0) << cli_.output("idle");
    EXPECT_EQ(cli_.output("idle"), path + ": no contenders\n");
    auto idle_json = cli_.start({"status", "-c", connect_string, "--json", path}, "idle-json");
    EXPECT_EQ(exit_code(idle_json), 0) << cli_.output("idle-json");
    EXPECT_EQ(nlohmann::json::parse(cli_.output("idle-json")).at("exists"), true) << cli_.output("idle-json");
    auto both = cli_.start({"status", "-c", connect_string, path, missing}, "both");
    EXPECT_EQ(exit_code(both), 66) << cli_.output("both");
    EXPECT_TRUE(contains(cli_.output("both"), path + ": no contenders\n")) << cli_.output("both");
    EXPECT_TRUE(contains(cli_.output("both"), missing + ": the lock path does not exist")) << cli_.output("both");
}

TEST_F(CliTest, StatusListsContendersInQueueOrder) {
    const auto path = lock_path();
    {
        auto s = connect();
        create_parents(*s, path);
        zklock::testing::create_node(*s, path);  // an idle lock: its node, nobody in its queue
    }
    auto empty = cli_.start({"status", "-c", server_->connect_string(), path}, "empty");
    EXPECT_EQ(exit_code(empty), 0);
    EXPECT_NE(cli_.output("empty").find("no contenders"), std::string::npos) << cli_.output("empty");

    auto s1 = connect();
    auto s2 = connect();
    Mutex holder(*s1, path);
    Mutex waiter(*s2, path);
    holder.lock();
    auto granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2 && !waiter.node_path().empty(); }));
    const auto first = node_name(holder.node_path());
    const auto second = node_name(waiter.node_path());

    // -o wide: node names whole (the default table cuts them to fit 100 columns).
    auto text = cli_.start({"status", "-c", server_->connect_string(), "-o", "wide", path}, "text");
    EXPECT_EQ(exit_code(text), 0);
    const auto out = cli_.output("text");
    const auto at_first = out.find(first);
    const auto at_second = out.find(second);
    ASSERT_NE(at_first, std::string::npos) << out;
    ASSERT_NE(at_second, std::string::npos) << out;
    EXPECT_LT(at_first, at_second) << out;
    EXPECT_NE(out.find(hex(s1->session_id())), std::string::npos) << out;
    EXPECT_NE(out.find(std::to_string(holder.fencing_token())), std::string::npos) << out;

    auto json = cli_.start({"status", "-c", server_->connect_string(), "--json", path}, "json");
    EXPECT_EQ(exit_code(json), 0);
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(cli_.output("json"))) << cli_.output("json");
    EXPECT_EQ(doc.at("path"), path);
    const auto& queue = doc.at("contenders");
    ASSERT_EQ(queue.size(), 2u) << doc.dump();
    EXPECT_EQ(queue[0].at("position"), 0);
    EXPECT_EQ(queue[0].at("node"), first);
    EXPECT_EQ(queue[0].at("fencing_token"), holder.fencing_token());
    EXPECT_EQ(queue[0].at("owner_session"), hex(s1->session_id()));
    EXPECT_GE(queue[0].at("age_ms").get<std::int64_t>(), 0);
    EXPECT_EQ(queue[1].at("position"), 1);
    EXPECT_EQ(queue[1].at("node"), second);
    EXPECT_EQ(queue[1].at("owner_session"), hex(s2->session_id()));

    holder.unlock();
    EXPECT_FALSE(get_within(granted));
    waiter.unlock();
}

// --- server ------------------------------------------------------------------------

// A --port another program listens on is named before anything starts: no
// connect string on stdout, no Java left, and the unavailable status.
TEST(CliServerTest, APortTakenByAnotherProgramIsNamed) {
    Cli cli;
    SilentListener taken;  // holds 127.0.0.1:PORT
    const auto port = taken.address().substr(taken.address().rfind(':') + 1);
    TempDir tmp("zklock-cli-server-");
    auto p = cli.start({"server", "--port", port}, "server", {{"TMPDIR", tmp.path().string()}});
    EXPECT_EQ(exit_code(p, 60s), 69) << cli.output("server");
    EXPECT_EQ(cli.output("server"), "zklock: could not start ZooKeeper: port " + port +
                                        " of 127.0.0.1 is taken: another program listens there (a ZooKeeper server "
                                        "already running?); stop it, or give another --port (none: a free one)\n");
    EXPECT_FALSE(quorum_peer_running_with(tmp.path().string()));
}

TEST(CliServerTest, ServesUntilSigtermAndLeavesNoJavaBehind) {
    Cli cli;
    TempDir tmp("zklock-cli-server-");
    const auto data = tmp.path() / "data";
    // TMPDIR puts the fixture's own directory (and with it the server's command line) under tmp.
    auto p = cli.start({"server", "--dir", data.string()}, "server", {{"TMPDIR", tmp.path().string()}});
    const auto connect_string = wait_for_line(cli.output_path("server"), 60s);
    ASSERT_EQ(connect_string.rfind("127.0.0.1:", 0), 0u) << cli.output("server");
    {
        SessionOptions o;
        o.connect = connect_string;
        o.session_timeout = 2s;
        o.connect_timeout = 10s;
        Session s(o);
        s.connect();
        Mutex m(s, "/zklock-tests/cli-server");
        m.lock();
        EXPECT_TRUE(m.is_held());
        auto released = m.async_unlock(boost::asio::use_future);
        EXPECT_FALSE(get_within(released));
    }
    EXPECT_TRUE(quorum_peer_running_with(tmp.path().string()));
    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), 0) << cli.output("server");
    EXPECT_FALSE(quorum_peer_running_with(tmp.path().string()));
    EXPECT_TRUE(std::filesystem::exists(data / "version-2")) << "--dir keeps the data";
}

// --- run --permits (semaphore) -----------------------------------------------------

TEST_F(CliTest, RunPermitsLetsKHoldAtOnceAndAWaiterInWhenOneLeaves) {
    const auto path = lock_path();
    // Each holder writes its fencing token to a file named after it, then holds.
    auto holder = [&](const std::string& name, std::vector<std::string> extra = {}) {
        extra.insert(extra.begin(), {"--permits", "2"});
        return cli_.start(plus(run_args(path, extra), {"sh", "-c", "echo $ZKLOCK_FENCING_TOKEN > \"$0\"; exec sleep 600",
                                                       cli_.file(name).string()}),
                          name);
    };
    auto a = holder("a");
    auto b = holder("b");
    const auto token_a = std::stoll(wait_for_line(cli_.file("a")));
    const auto token_b = std::stoll(wait_for_line(cli_.file("b")));
    EXPECT_NE(token_a, token_b);
    EXPECT_EQ(queue_length(path), 2u);

    auto n = holder("n", {"-n"});
    EXPECT_EQ(exit_code(n), 75) << cli_.output("n");
    EXPECT_FALSE(std::filesystem::exists(cli_.file("n")));
    EXPECT_NE(cli_.output("n").find("permits of " + path), std::string::npos) << cli_.output("n");
    auto w = holder("w", {"-w", "300"});
    EXPECT_EQ(exit_code(w), 75) << cli_.output("w");
    EXPECT_FALSE(std::filesystem::exists(cli_.file("w")));
    EXPECT_NE(cli_.output("w").find("not acquired within 300 ms"), std::string::npos) << cli_.output("w");
    EXPECT_EQ(queue_length(path), 2u) << "the timed-out waiter left no node";

    auto c = holder("c");
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 3; })) << cli_.output("c");
    EXPECT_FALSE(std::filesystem::exists(cli_.file("c"))) << "a third holder of 2 permits";
    ASSERT_EQ(::kill(a.pid(), SIGTERM), 0);  // zklock only: it forwards the signal, then releases
    EXPECT_EQ(exit_code(a), 143) << cli_.output("a");
    const auto token_c = std::stoll(wait_for_line(cli_.file("c")));
    EXPECT_GT(token_c, std::max(token_a, token_b));

    ASSERT_EQ(::kill(b.pid(), SIGTERM), 0);
    ASSERT_EQ(::kill(c.pid(), SIGTERM), 0);
    EXPECT_EQ(exit_code(b), 143) << cli_.output("b");
    EXPECT_EQ(exit_code(c), 143) << cli_.output("c");
}

TEST_F(CliTest, RunPermitsMismatchExits64WithoutRunningCommand) {
    const auto path = lock_path();
    auto s = connect();
    Semaphore semaphore(*s, path, 2);
    auto lease = semaphore.permit();
    lease.lock();
    const auto marker = cli_.file("ran");
    auto p = cli_.start(plus(run_args(path, {"--permits", "3"}), {"touch", marker.string()}));
    EXPECT_EQ(exit_code(p), 64) << cli_.output();
    EXPECT_NE(cli_.output().find("zklock: " + path + " is a semaphore of 2 permits, not 3"), std::string::npos)
        << cli_.output();
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_EQ(queue_length(path), 1u);
    EXPECT_TRUE(lease.is_held());
    lease.unlock();
}

// --- elect -------------------------------------------------------------------------

class CliElectTest : public CliTest {
protected:
    std::vector<std::string> elect_args(const std::string& path, const std::string& id,
                                        std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"elect", "-c", server_->connect_string()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(), {path, id, "--"});
        return args;
    }
    static std::vector<std::string> lines(const std::filesystem::path& p) { return complete_lines(p); }
};

TEST_F(CliElectTest, OneLeaderRunsItsCommandAndASuccessorTakesOverWithAGreaterEpoch) {
    const auto path = lock_path("election");
    auto participant = [&](const std::string& id) {
        return cli_.start(plus(elect_args(path, id, {"--session-timeout", "2000"}),
                               {"sh", "-c", "echo $ZKLOCK_LEADER_EPOCH >> \"$0\"; exec sleep 600",
                                cli_.file("leader-" + id + ".txt").string()}),
                          id);
    };
    auto a = participant("id-a");
    auto b = participant("id-b");
    const auto file_a = cli_.file("leader-id-a.txt");
    const auto file_b = cli_.file("leader-id-b.txt");
    ASSERT_TRUE(wait_until([&] { return first_line(file_a) || first_line(file_b); }, 30s))
        << cli_.output("id-a") << cli_.output("id-b");
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; })) << cli_.output("id-a") << cli_.output("id-b");
    // Both are in line now; only the first one's command runs.
    const bool a_leads = first_line(file_a).has_value();
    ASSERT_NE(a_leads, first_line(file_b).has_value()) << "exactly one leader";
    auto& leader = a_leads ? a : b;
    auto& successor = a_leads ? b : a;
    const auto& leader_file = a_leads ? file_a : file_b;
    const auto& successor_file = a_leads ? file_b : file_a;
    const auto first_epoch = std::stoll(*first_line(leader_file));

    leader.kill9();  // zklock and its command (one process group)
    // Correctness bound: the leader's session (2 s) expires, its node goes, the
    // successor leads and starts its command.
    std::optional<std::string> line;
    EXPECT_TRUE(wait_until([&] { return (line = first_line(successor_file)).has_value(); }, 3000ms))
        << cli_.output(a_leads ? "id-b" : "id-a");
    ASSERT_TRUE(line.has_value() || (line = first_line(successor_file)).has_value());
    EXPECT_GT(std::stoll(*line), first_epoch);
    EXPECT_EQ(lines(leader_file).size(), 1u);

    ASSERT_EQ(::kill(successor.pid(), SIGTERM), 0);
    EXPECT_EQ(exit_code(successor), 143) << cli_.output(a_leads ? "id-b" : "id-a");
}

TEST_F(CliElectTest, OnceExitsWithTheCommandsStatusAndLeavesNoNode) {
    const auto path = lock_path("election");
    const auto env_file = cli_.file("env");
    auto p = cli_.start(plus(elect_args(path, "solo", {"--once"}),
                             {"sh", "-c", "echo \"$ZKLOCK_LEADER_EPOCH $ZKLOCK_LOCK_NODE\" > \"$0\"; exit 3",
                              env_file.string()}));
    EXPECT_EQ(exit_code(p), 3) << cli_.output();
    std::istringstream env(read_file(env_file));
    std::int64_t epoch = 0;
    std::string node;
    env >> epoch >> node;
    EXPECT_GT(epoch, 0);
    EXPECT_EQ(node.rfind(path + "/_c_", 0), 0u) << node;
    // zklock waits for the resignation to commit before it exits.
    EXPECT_EQ(queue_length(path), 0u);
}

TEST_F(CliElectTest, SigtermWhileCampaigningExits143AndLeavesNoNode) {
    const auto path = lock_path("election");
    auto s = connect();
    LeaderElection incumbent(*s, path, "incumbent");
    incumbent.campaign();
    const auto marker = cli_.file("ran");
    auto p = cli_.start(plus(elect_args(path, "challenger"), {"touch", marker.string()}));
    ASSERT_TRUE(wait_until([&] { return queue_length(path) == 2; })) << cli_.output();
    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), 143) << cli_.output();
    EXPECT_EQ(queue_length(path), 1u);
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_TRUE(incumbent.is_leader());
    incumbent.resign();
}

TEST_F(CliElectTest, LostLeadershipStopsTheCommandAndCampaignsAgain) {
    const auto path = lock_path("election");
    const auto terms = cli_.file("terms");
    auto p = cli_.start(plus(elect_args(path, "id-a"),
                             {"sh", "-c", "echo \"$ZKLOCK_LEADER_EPOCH $ZKLOCK_LOCK_NODE $$\" >> \"$0\"; exec sleep 600",
                              terms.string()}));
    ASSERT_TRUE(wait_until([&] { return lines(terms).size() == 1; }, 30s)) << cli_.output();
    std::istringstream first(lines(terms).front());
    std::int64_t epoch = 0;
    std::string node;
    pid_t command = 0;
    first >> epoch >> node >> command;
    auto s = connect();
    zklock::testing::delete_node(*s, node);
    ASSERT_TRUE(wait_until([&] { return lines(terms).size() == 2; }, 30s)) << cli_.output();
    EXPECT_NE(cli_.output().find(
                  "zklock: leadership lost: another client deleted the election node; stopping the command\n"),
              std::string::npos)
        << cli_.output();
    EXPECT_TRUE(wait_until([&] { return process_gone(command); })) << "the first term's command was stopped";
    std::istringstream second(lines(terms).back());
    std::int64_t epoch2 = 0;
    second >> epoch2;
    EXPECT_GT(epoch2, epoch);
    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), 143) << cli_.output();
}

TEST_F(CliElectTest, LostLeadershipWithOnceExits76) {
    const auto path = lock_path("election");
    const auto node_file = cli_.file("node");
    auto p = cli_.start(plus(elect_args(path, "id-a", {"--once"}),
                             {"sh", "-c", "echo $ZKLOCK_LOCK_NODE > \"$0\"; exec sleep 600", node_file.string()}));
    const auto node = wait_for_line(node_file);
    auto s = connect();
    zklock::testing::delete_node(*s, node);
    EXPECT_EQ(exit_code(p), 76) << cli_.output();
    EXPECT_NE(cli_.output().find("leadership lost"), std::string::npos) << cli_.output();
}

TEST_F(CliElectTest, ObserveJsonPrintsTheLeaderAndEveryChange) {
    const auto path = lock_path("election");
    auto p = cli_.start({"elect", "--observe", "-c", server_->connect_string(), "--json", path}, "observe");
    const auto out = cli_.output_path("observe");
    auto line = [&](std::size_t i) { return nlohmann::json::parse(lines(out).at(i)); };
    ASSERT_TRUE(wait_until([&] { return lines(out).size() >= 1; }, 30s)) << cli_.output("observe");
    EXPECT_TRUE(line(0).at("leader").is_null()) << line(0).dump();

    auto s = connect();
    LeaderElection election(*s, path, "tester");
    const auto term = election.campaign();
    ASSERT_TRUE(wait_until([&] { return lines(out).size() >= 2; })) << cli_.output("observe");
    EXPECT_EQ(line(1).at("leader"), "tester") << line(1).dump();
    EXPECT_EQ(line(1).at("epoch"), term.epoch) << line(1).dump();
    EXPECT_EQ(line(1).at("node"), node_name(term.node)) << line(1).dump();

    election.resign();
    ASSERT_TRUE(wait_until([&] { return lines(out).size() >= 3; })) << cli_.output("observe");
    EXPECT_TRUE(line(2).at("leader").is_null()) << line(2).dump();

    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), 0) << cli_.output("observe");
    EXPECT_EQ(lines(out).size(), 3u) << cli_.output("observe");
}

TEST_F(CliElectTest, ObserveTextNamesTheLeader) {
    const auto path = lock_path("election");
    auto s = connect();
    LeaderElection election(*s, path, "tester");
    const auto term = election.campaign();
    auto p = cli_.start({"elect", "--observe", "-c", server_->connect_string(), path}, "observe");
    const auto out = cli_.output_path("observe");
    ASSERT_TRUE(wait_until([&] { return lines(out).size() >= 1; }, 30s)) << cli_.output("observe");
    EXPECT_EQ(lines(out).at(0),
              "leader tester epoch " + std::to_string(term.epoch) + " node " + node_name(term.node));
    election.resign();
    ASSERT_TRUE(wait_until([&] { return lines(out).size() >= 2; })) << cli_.output("observe");
    EXPECT_EQ(lines(out).at(1), "no leader");
    ASSERT_TRUE(p.signal(SIGINT));
    EXPECT_EQ(exit_code(p), 0) << cli_.output("observe");
}

// With -v, the exit of a term's command is said once: in the line that says
// zklock resigned and campaigns again.
TEST_F(CliElectTest, VerboseSaysTheCommandsExitOnce) {
    const auto path = lock_path("election");
    auto p = cli_.start(plus(elect_args(path, "id-v", {"-v", "--rejoin-delay", "1h"}), {"true"}));
    ASSERT_TRUE(wait_until([&] { return cli_.output().find("campaigning again in") != std::string::npos; }, 30s))
        << cli_.output();
    ASSERT_TRUE(p.signal(SIGTERM));  // while it waits to campaign again
    EXPECT_EQ(exit_code(p), 143) << cli_.output();
    const auto out = cli_.output();
    const auto first = out.find("command exited with 0");
    ASSERT_NE(first, std::string::npos) << out;
    EXPECT_EQ(out.find("command exited with 0", first + 1), std::string::npos) << out;
    EXPECT_NE(out.find("zklock: command exited with 0; resigned, campaigning again in "), std::string::npos) << out;
}

TEST(CliUsageTest, ElectRefusesMissingArguments) {
    Cli cli;
    auto no_command = cli.start({"elect", "-c", "127.0.0.1:1", "/e", "id"}, "a");
    EXPECT_EQ(exit_code(no_command), 64) << cli.output("a");
    auto observe_with_command = cli.start({"elect", "--observe", "-c", "127.0.0.1:1", "/e", "id", "--", "true"}, "b");
    EXPECT_EQ(exit_code(observe_with_command), 64) << cli.output("b");
    auto bad_path = cli.start({"elect", "-c", "127.0.0.1:1", "relative", "id", "--", "true"}, "c");
    EXPECT_EQ(exit_code(bad_path), 64) << cli.output("c");
    EXPECT_NE(cli.output("c").find("absolute"), std::string::npos) << cli.output("c");
}

// --- bench --backend ---------------------------------------------------------------

// The text after `prefix` on the line of `text` that holds it, or "".
std::string after(const std::string& text, const std::string& prefix) {
    const auto at = text.find(prefix);
    if (at == std::string::npos) return "";
    const auto start = at + prefix.size();
    return text.substr(start, text.find('\n', start) - start);
}

// True when nothing accepts connections on 127.0.0.1:port any more.
bool refuses_connections(std::uint16_t port) {
    try {
        zklock::testing::redis_command(port, {"PING"}, 5s);
    } catch (const std::system_error& e) {
        return e.code() == std::errc::connection_refused;
    }
    return false;
}

TEST(CliBenchTest, BackendReportHoldsEveryRunTheBaselineAndTheCharts) {
    Cli cli;
    const auto report = cli.file("r");
    auto p = cli.start({"bench", "--backend", "flock,redis", "--ops", "30", "--warmup", "0", "--sweep", "1,2",
                        "--report", report.string()},
                       "bench");
    // A deadline against a hang only: the run takes seconds.
    ASSERT_EQ(exit_code(p, 300s), 0) << cli.output("bench");
    const auto out = cli.output("bench");

    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(read_file(report / "results.json"))) << read_file(report / "results.json");
    EXPECT_EQ(j["ops_per_run"], 30);
    EXPECT_EQ(j["client_counts"], nlohmann::json::array({1, 2}));
    const auto& results = j["results"];
    ASSERT_TRUE(results.is_array()) << j.dump(2);
    struct run {
        const char* backend;
        const char* scenario;
        int clients;
    };
    const std::vector<run> expected = {
        {"flock", "uncontended", 1}, {"flock", "contended", 1}, {"flock", "contended", 2},
        {"flock", "separate", 1},    {"flock", "separate", 2},  {"redis", "uncontended", 1},
        {"redis", "contended", 1},   {"redis", "contended", 2}, {"redis", "separate", 1},
        {"redis", "separate", 2}};
    EXPECT_EQ(results.size(), expected.size()) << results.dump(2);
    for (const auto& e : expected) {
        SCOPED_TRACE(std::string(e.backend) + " " + e.scenario + " clients " + std::to_string(e.clients));
        std::vector<nlohmann::json> found;
        for (const auto& r : results)
            if (r["backend"] == e.backend && r["scenario"] == e.scenario && r["clients"] == e.clients) found.push_back(r);
        ASSERT_EQ(found.size(), 1u) << results.dump(2);
        const auto& r = found.front();
        EXPECT_EQ(r["ops"], 30) << r.dump();
        // Every grant took at least one request to the server.
        ASSERT_TRUE(r["attempts_per_grant"].is_number()) << r.dump();
        EXPECT_GE(r["attempts_per_grant"].get<double>(), 1.0) << r.dump();
        if (std::string(e.scenario) != "contended") continue;
        for (const char* key : {"out_of_order_grants", "most_overtaken", "handoff_p50_us", "wakeups_per_grant"})
            EXPECT_TRUE(r.contains(key) && r[key].is_number()) << key << " in " << r.dump();
        if (e.clients == 1) {
            // A lone client asks again only after its grant: nobody can overtake it.
            EXPECT_EQ(r["out_of_order_grants"], 0) << r.dump();
            EXPECT_EQ(r["most_overtaken"], 0) << r.dump();
        }
    }

    const auto md = read_file(report / "results.md");
    EXPECT_NE(md.find("| redis |"), std::string::npos) << md;
    EXPECT_NE(md.find("| flock |"), std::string::npos) << md;
    for (const char* chart : {"latency.svg", "contended.svg", "separate.svg"}) {
        EXPECT_TRUE(std::filesystem::exists(report / chart)) << chart << "\n" << out;
        EXPECT_NE(read_file(report / chart).find("<svg"), std::string::npos) << chart;
    }

    // Nothing the bench started outlives it: its Redis server and its flock directory.
    const auto redis_at = after(out, "started a throwaway Redis at 127.0.0.1:");
    ASSERT_FALSE(redis_at.empty()) << out;
    EXPECT_TRUE(refuses_connections(static_cast<std::uint16_t>(std::stoi(redis_at)))) << "Redis still runs at " << redis_at;
    ASSERT_TRUE(j["servers"].contains("flock")) << j["servers"].dump();
    const auto flock_dir = after(j["servers"]["flock"].get<std::string>() + "\n", "lock files in ");
    ASSERT_FALSE(flock_dir.empty()) << j["servers"].dump();
    EXPECT_FALSE(std::filesystem::exists(flock_dir)) << flock_dir;

    if (std::system("command -v redis-benchmark >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "redis-benchmark is not on PATH (it comes with redis-server's redis-tools): no baseline to check";
    const nlohmann::json* baseline = nullptr;
    for (const auto& b : j["baselines"])
        if (b["tool"] == "redis-benchmark") baseline = &b;
    ASSERT_NE(baseline, nullptr) << j["baselines"].dump(2) << "\n" << out;
    EXPECT_EQ((*baseline)["backend"], "redis");
    ASSERT_TRUE((*baseline)["pair_p50_us"].is_number()) << baseline->dump();
    EXPECT_GT((*baseline)["pair_p50_us"].get<double>(), 0.0) << baseline->dump();
}

TEST(CliUsageTest, BenchBackendOptionsAreCheckedBeforeAnythingRuns) {
    Cli cli;
    auto separate = cli.start({"bench", "--scenario", "separate"}, "separate");
    EXPECT_EQ(exit_code(separate), 64) << cli.output("separate");
    EXPECT_NE(cli.output("separate").find("--scenario separate needs --backend"), std::string::npos)
        << cli.output("separate");
    auto unknown = cli.start({"bench", "--backend", "nosuch"}, "unknown");
    EXPECT_EQ(exit_code(unknown), 64) << cli.output("unknown");
    EXPECT_NE(cli.output("unknown").find("nosuch"), std::string::npos) << cli.output("unknown");
    auto redis_alone = cli.start({"bench", "--redis", "127.0.0.1:1"}, "redis");
    EXPECT_EQ(exit_code(redis_alone), 64) << cli.output("redis");
    EXPECT_NE(cli.output("redis").find("--backend"), std::string::npos) << cli.output("redis");
}

} // namespace
