#include "process_support.hpp"

#include <zklock/testing/process.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using namespace zklock::test;
using zklock::testing::ChildProcess;
using zklock::testing::Ensemble;
using zklock::testing::TempDir;
using zklock::testing::ZooKeeperServer;

std::error_code four_letter_word_error(std::uint16_t port, const std::string& cmd, milliseconds timeout) {
    try {
        zklock::testing::four_letter_word(port, cmd, timeout);
        return {};
    } catch (const std::system_error& e) {
        return e.code();
    }
}

bool answers_imok(ZooKeeperServer& server) {
    try {
        return server.four_letter_word("ruok", 1s) == "imok";
    } catch (const std::system_error&) {
        return false;
    }
}

bool server_process_gone(pid_t pid, const std::string& needle) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    return !is_server_cmdline(read_cmdline("/proc/" + std::to_string(pid)), needle);
}

std::string mode_of(ZooKeeperServer& server) {
    try {
        return zklock::testing::server_mode(server.four_letter_word("srvr", 2s)).value_or("");
    } catch (const std::system_error&) {
        return "";
    }
}

// --- process.hpp -------------------------------------------------------------

TEST(ChildProcessTest, ReportsExitStatus) {
    ChildProcess child({"sh", "-c", "exit 3"});
    const auto status = child.wait_exit(10s);
    ASSERT_TRUE(status.has_value());
    EXPECT_TRUE(WIFEXITED(*status));
    EXPECT_EQ(WEXITSTATUS(*status), 3);
    EXPECT_FALSE(child.running());
    EXPECT_FALSE(child.signal(SIGTERM));
}

TEST(ChildProcessTest, MissingProgramThrows) {
    EXPECT_THROW(ChildProcess({"/nonexistent/zklock-no-such-program"}), std::system_error);
    EXPECT_THROW(ChildProcess({"zklock-no-such-program-in-path"}), std::system_error);
}

TEST(ChildProcessTest, RedirectsOutputAndEnvironmentAndWorkingDir) {
    TempDir dir;
    zklock::testing::ChildProcessOptions options;
    options.env = {{"ZKLOCK_FIXTURE_TEST", "hello"}};
    options.working_dir = dir.path();
    options.output_path = dir.path() / "out.log";
    ChildProcess child({"sh", "-c", "echo \"$ZKLOCK_FIXTURE_TEST $(pwd)\"; echo err >&2"}, options);
    ASSERT_TRUE(child.wait_exit(10s).has_value());
    std::ifstream in(options.output_path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "hello " + dir.path().string() + "\nerr\n");
}

TEST(ChildProcessTest, StopPauseResumeAndOwnProcessGroup) {
    ChildProcess child({"sleep", "60"});
    EXPECT_TRUE(child.running());
    EXPECT_EQ(::getpgid(child.pid()), child.pid());
    EXPECT_TRUE(child.pause());
    EXPECT_FALSE(child.wait_exit(50ms).has_value());
    EXPECT_TRUE(child.resume());
    const int status = child.stop(5s);
    EXPECT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
    EXPECT_FALSE(child.running());
}

TEST(ChildProcessTest, StopOfPausedChildStillTerminates) {
    ChildProcess child({"sleep", "60"});
    ASSERT_TRUE(child.pause());
    const int status = child.stop(5s);
    EXPECT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(TempDirTest, RemovedUnlessKept) {
    std::filesystem::path removed;
    std::filesystem::path kept;
    {
        TempDir a;
        TempDir b;
        removed = a.path();
        kept = b.path();
        std::ofstream(a.path() / "file") << "x";
        std::filesystem::create_directories(a.path() / "sub" / "dir");
        b.keep();
        EXPECT_TRUE(std::filesystem::is_directory(removed));
        EXPECT_NE(a.path(), b.path());
    }
    EXPECT_FALSE(std::filesystem::exists(removed));
    EXPECT_TRUE(std::filesystem::is_directory(kept));
    std::filesystem::remove_all(kept);
}

TEST(FreePortTest, PortsAreDistinctAndNonZero) {
    const auto ports = zklock::testing::free_loopback_ports(16);
    EXPECT_EQ(std::set<std::uint16_t>(ports.begin(), ports.end()).size(), ports.size());
    EXPECT_NE(zklock::testing::free_loopback_port(), 0);
}

// --- ZooKeeperServer ---------------------------------------------------------

TEST(ZooKeeperServerTest, StartsAndAnswersRuok) {
    ZooKeeperServer server;
    EXPECT_TRUE(server.running());
    EXPECT_NE(server.port(), 0);
    EXPECT_EQ(server.connect_string(), "127.0.0.1:" + std::to_string(server.port()));
    EXPECT_EQ(server.four_letter_word("ruok", 5s), "imok");
    EXPECT_EQ(mode_of(server), "standalone");
    EXPECT_TRUE(std::filesystem::exists(server.log_path()));
    EXPECT_GT(server.pid(), 0);
}

TEST(ZooKeeperServerTest, TwoServersGetDifferentPorts) {
    ZooKeeperServer a;
    ZooKeeperServer b;
    EXPECT_NE(a.port(), b.port());
    EXPECT_NE(a.directory(), b.directory());
    EXPECT_EQ(a.four_letter_word("ruok", 5s), "imok");
    EXPECT_EQ(b.four_letter_word("ruok", 5s), "imok");
}

TEST(ZooKeeperServerTest, StopRefusesConnections) {
    ZooKeeperServer server;
    const auto port = server.port();
    server.stop();
    EXPECT_FALSE(server.running());
    EXPECT_EQ(server.pid(), -1);
    EXPECT_EQ(four_letter_word_error(port, "ruok", 2s), std::errc::connection_refused);
}

TEST(ZooKeeperServerTest, RestartComesBackOnTheSamePort) {
    ZooKeeperServer server;
    const auto port = server.port();
    const auto first_pid = server.pid();
    server.restart();
    EXPECT_EQ(server.port(), port);
    EXPECT_NE(server.pid(), first_pid);
    EXPECT_EQ(server.four_letter_word("ruok", 5s), "imok");
    server.kill9();
    EXPECT_EQ(four_letter_word_error(port, "ruok", 2s), std::errc::connection_refused);
    server.restart();
    EXPECT_EQ(server.port(), port);
    EXPECT_EQ(server.four_letter_word("ruok", 5s), "imok");
}

TEST(ZooKeeperServerTest, PauseMakesRuokTimeOutAndResumeAnswersAgain) {
    ZooKeeperServer server;
    server.pause();
    EXPECT_TRUE(server.paused());
    EXPECT_TRUE(server.running());
    EXPECT_EQ(four_letter_word_error(server.port(), "ruok", 300ms), std::errc::timed_out);
    server.resume();
    EXPECT_FALSE(server.paused());
    EXPECT_TRUE(eventually([&] { return answers_imok(server); }, 10s));

    server.pause();
    const auto before_stop = std::chrono::steady_clock::now();
    server.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - before_stop, 4s) << "a paused server must still stop on SIGTERM";
    EXPECT_FALSE(server.running());
}

TEST(ZooKeeperServerTest, DestructionLeavesNoServerProcessOrDirectory) {
    std::string dir;
    {
        ZooKeeperServer server;
        dir = server.directory().string();
        ASSERT_TRUE(quorum_peer_running_with(dir));
    }
    EXPECT_TRUE(eventually([&] { return !quorum_peer_running_with(dir); }, 10s));
    EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(ZooKeeperServerTest, FailedStartReportsTheLog) {
    zklock::testing::ZooKeeperServerOptions options;
    options.extra_config = {"tickTime=not-a-number"};
    try {
        ZooKeeperServer server(options);
        FAIL() << "a server with a broken zoo.cfg started";
    } catch (const std::runtime_error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("failed to start"), std::string::npos) << message;
        EXPECT_NE(message.find("last lines"), std::string::npos) << message;
    }
}

TEST(ZooKeeperServerTest, CrashedParentLeavesNoServer) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(fds[0]);
        try {
            ZooKeeperServer server;
            const std::string line = std::to_string(server.pid()) + " " + server.directory().string() + "\n";
            if (::write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(2);
        } catch (...) {
            ::_exit(1);
        }
        std::abort();
    }
    ::close(fds[1]);
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
        pollfd p{fds[0], POLLIN, 0};
        if (::poll(&p, 1, 1000) <= 0) continue;
        char buf[512];
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n <= 0) break;
        line.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << zklock::testing::describe_wait_status(status);
    std::istringstream in(line);
    pid_t server_pid = -1;
    std::string dir;
    in >> server_pid >> dir;
    ASSERT_GT(server_pid, 0) << "child wrote: '" << line << "'";
    ASSERT_FALSE(dir.empty());
    EXPECT_TRUE(eventually([&] { return server_process_gone(server_pid, dir); }, 10s));
    std::filesystem::remove_all(dir);
}

// --- Ensemble ----------------------------------------------------------------

TEST(EnsembleTest, ElectsOneLeaderAndSurvivesTheLossOfAFollower) {
    Ensemble ensemble;
    ASSERT_EQ(ensemble.size(), 3U);
    const auto connect = ensemble.connect_string();
    EXPECT_EQ(std::count(connect.begin(), connect.end(), ','), 2) << connect;

    int leaders = 0;
    int followers = 0;
    for (std::size_t i = 0; i < ensemble.size(); ++i) {
        const auto mode = mode_of(ensemble.node(i));
        leaders += mode == "leader";
        followers += mode == "follower";
    }
    EXPECT_EQ(leaders, 1);
    EXPECT_EQ(followers, 2);

    const auto leader = ensemble.leader_index();
    ASSERT_TRUE(leader.has_value());
    const std::size_t follower = (*leader + 1) % ensemble.size();
    const std::size_t other = (*leader + 2) % ensemble.size();

    ensemble.node(follower).kill9();
    EXPECT_FALSE(ensemble.node(follower).running());
    EXPECT_TRUE(ensemble.wait_for_quorum(20s));
    EXPECT_EQ(mode_of(ensemble.node(*leader)), "leader");
    EXPECT_EQ(mode_of(ensemble.node(other)), "follower");
    EXPECT_EQ(ensemble.leader_index(), leader);

    ensemble.node(follower).restart();
    EXPECT_EQ(mode_of(ensemble.node(follower)), "follower");
    EXPECT_TRUE(ensemble.wait_for_quorum(20s));
}

TEST(EnsembleTest, ElectsANewLeaderWhenTheLeaderDies) {
    Ensemble ensemble;
    const auto leader = ensemble.leader_index();
    ASSERT_TRUE(leader.has_value());
    ensemble.node(*leader).kill9();
    ASSERT_TRUE(ensemble.wait_for_quorum(30s));
    const auto new_leader = ensemble.leader_index();
    ASSERT_TRUE(new_leader.has_value());
    EXPECT_NE(*new_leader, *leader);
}

TEST(EnsembleTest, DestructionLeavesNoServerProcess) {
    std::string dir;
    {
        Ensemble ensemble;
        dir = ensemble.directory().string();
        ASSERT_TRUE(quorum_peer_running_with(dir));
    }
    EXPECT_TRUE(eventually([&] { return !quorum_peer_running_with(dir); }, 10s));
    EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
