// The zklock command-line tool, run as a separate process against real servers.
#include "support.hpp"

#include <zklock/testing/faults.hpp>
#include <zklock/testing/process.hpp>

#include <boost/asio/use_future.hpp>

#include <nlohmann/json.hpp>

#include <csignal>
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
using std::chrono::milliseconds;
using zklock::testing::ChildProcess;
using zklock::testing::ChildProcessOptions;
using zklock::testing::TempDir;

namespace {

std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The first line of a file once it is complete (a writer may be halfway through).
std::optional<std::string> first_line(const std::filesystem::path& p) {
    const auto text = read_file(p);
    const auto end = text.find('\n');
    if (end == std::string::npos) return std::nullopt;
    return text.substr(0, end);
}

std::string wait_for_line(const std::filesystem::path& p, milliseconds timeout = 30s) {
    std::optional<std::string> line;
    EXPECT_TRUE(wait_until([&] { return (line = first_line(p)).has_value(); }, timeout)) << "nothing in " << p;
    return line.value_or("");
}

// Gone, or a zombie nobody has reaped yet (an orphan's new parent may never reap it).
bool process_gone(pid_t pid) {
    const auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return true;
    return stat[close + 2] == 'Z' || stat[close + 2] == 'X';
}

bool quorum_peer_running_with(const std::string& needle) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        auto cmdline = read_file(entry.path() / "cmdline");
        for (auto& c : cmdline)
            if (c == '\0') c = ' ';
        if (cmdline.find("QuorumPeerMain") != std::string::npos && cmdline.find(needle) != std::string::npos)
            return true;
    }
    return false;
}

std::string hex(std::int64_t id) {
    std::ostringstream out;
    out << "0x" << std::hex << static_cast<std::uint64_t>(id);
    return out.str();
}

std::string node_name(const std::string& node_path) { return node_path.substr(node_path.rfind('/') + 1); }

// Runs the built `zklock` binary; each run's stdout and stderr go to <name>.out in a temp dir.
class Cli {
public:
    ChildProcess start(std::vector<std::string> args, const std::string& name = "cli",
                       std::vector<std::pair<std::string, std::string>> env = {}) {
        args.insert(args.begin(), ZKLOCK_CLI_PATH);
        ChildProcessOptions o;
        o.output_path = output_path(name);
        o.env = std::move(env);
        return ChildProcess(std::move(args), o);
    }
    std::filesystem::path file(const std::string& name) const { return dir_.path() / name; }
    std::filesystem::path output_path(const std::string& name = "cli") const { return file(name + ".out"); }
    std::string output(const std::string& name = "cli") const { return read_file(output_path(name)); }
    const std::filesystem::path& dir() const { return dir_.path(); }

private:
    TempDir dir_{"zklock-cli-"};
};

// The exit status of the child; -N when a signal N killed it (so that a zklock that
// died of SIGTERM is not taken for one that handled it and exited with 143);
// -1000 when it did not exit in time.
int exit_code(ChildProcess& p, milliseconds timeout = 30s) {
    const auto status = p.wait_exit(timeout);
    if (!status) return -1000;
    if (WIFEXITED(*status)) return WEXITSTATUS(*status);
    if (WIFSIGNALED(*status)) return -WTERMSIG(*status);
    return -2000;
}

class CliTest : public ServerTest {
protected:
    std::vector<std::string> run_args(const std::string& path, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"run", "-c", server_->connect_string()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.push_back(path);
        args.push_back("--");
        return args;
    }
    static std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    }
    std::size_t queue_length(const std::string& path) {
        auto observer = connect();
        return list_contenders(*observer, path).size();
    }

    Cli cli_;
};

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

TEST_F(CliTest, NonblockWhileHeldExits75WithoutRunningCommand) {
    const auto path = lock_path();
    auto s = connect();
    Mutex held(*s, path);
    held.lock();
    const auto marker = cli_.file("ran");
    auto p = cli_.start(plus(run_args(path, {"-n"}), {"touch", marker.string()}));
    EXPECT_EQ(exit_code(p), 75) << cli_.output();
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_NE(cli_.output().find("held by someone else"), std::string::npos) << cli_.output();
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
    EXPECT_NE(cli_.output().find("lock lost"), std::string::npos) << cli_.output();
    EXPECT_TRUE(wait_until([&] { return process_gone(command); }, 10s));
    EXPECT_EQ(queue_length(path), 0u);
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

TEST_F(CliTest, SigintWhileConnectingExits130) {
    const auto connect_to = "127.0.0.1:" + std::to_string(zklock::testing::free_loopback_port());
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

// --- status ------------------------------------------------------------------------

TEST_F(CliTest, StatusListsContendersInQueueOrder) {
    const auto path = lock_path();
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

    auto text = cli_.start({"status", "-c", server_->connect_string(), path}, "text");
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

} // namespace
