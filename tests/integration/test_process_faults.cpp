// Process faults, one interface for all (testing::FaultableProcess): kill -9,
// SIGSTOP for a while that ends by itself, restart; on a client process
// (ChildProcess) and on each real-server fixture.
#include "fault_support.hpp"

#include <zklock/testing/postgres_server.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/redis_server.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include "support.hpp"

#include <fstream>
#include <functional>
#include <sstream>

#include <signal.h>
#include <sys/wait.h>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;
using zklock::testing::ChildProcess;
using zklock::testing::FaultableProcess;

namespace {

// The state letter of /proc/PID/stat ('T' stopped, 'S' sleeping, ...); '?' when gone.
char process_state(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

std::size_t lines_in(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
}

// What every FaultableProcess must do; `serves` asks the process's own protocol.
void check_faults(FaultableProcess& p, const std::function<bool()>& serves,
                  const std::function<std::vector<pid_t>()>& others = {}) {
    SCOPED_TRACE(p.name());
    ASSERT_TRUE(p.running());
    const pid_t pid = p.pid();
    ASSERT_GT(pid, 0);

    // SIGSTOP for a while, resuming by itself.
    ASSERT_TRUE(p.pause_for(500ms));
    EXPECT_TRUE(p.paused());
    EXPECT_EQ(process_state(pid), 'T');
    if (others) {
        for (const pid_t o : others()) EXPECT_EQ(process_state(o), 'T') << "pid " << o;
    }
    EXPECT_TRUE(wait_until([&] { return !p.paused(); }, 10s)) << "pause_for() must end by itself";
    EXPECT_TRUE(wait_until([&] { return process_state(pid) != 'T'; }, 10s));
    if (others) {
        for (const pid_t o : others()) EXPECT_TRUE(wait_until([&] { return process_state(o) != 'T'; }, 10s)) << o;
    }
    EXPECT_TRUE(wait_until(serves, 10s)) << "serves again after the pause";

    // A pause_for() that resume() ends early.
    ASSERT_TRUE(p.pause_for(1h));
    EXPECT_EQ(process_state(pid), 'T');
    EXPECT_TRUE(p.resume());
    EXPECT_FALSE(p.paused());
    EXPECT_TRUE(wait_until([&] { return process_state(pid) != 'T'; }, 10s));

    // kill -9 (during a pause: SIGKILL needs no SIGCONT), then restart.
    ASSERT_TRUE(p.pause_for(1h));
    const int status = p.kill9();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << zt::describe_wait_status(status);
    EXPECT_FALSE(p.running());
    EXPECT_FALSE(p.paused());
    p.restart();
    EXPECT_TRUE(p.running());
    EXPECT_NE(p.pid(), pid);
    EXPECT_TRUE(wait_until(serves, 10s)) << "serves after the restart";
}

}  // namespace

TEST(ProcessFaults, ChildProcessPauseForResumesByItselfAndRestartRunsTheSameCommand) {
    zt::TempDir dir;
    zt::ChildProcessOptions options;
    options.output_path = dir.path() / "out";
    ChildProcess child({"sh", "-c", "echo started; exec sleep 600"}, options);
    EXPECT_TRUE(wait_until([&] { return lines_in(options.output_path) == 1; }));
    check_faults(child, [&] { return child.running(); });
    EXPECT_TRUE(wait_until([&] { return lines_in(options.output_path) == 2; }))
        << "restart() runs the same command line once more";
    EXPECT_NE(child.name().find("(sh)"), std::string::npos) << child.name();
    child.kill9();
    expect_no_fault_leftovers();
}

TEST(ProcessFaults, ChildProcessDestroyedDuringPauseForLeavesNoThread) {
    pid_t pid = 0;
    {
        ChildProcess child({"sleep", "600"});
        pid = child.pid();
        ASSERT_TRUE(child.pause_for(1h));
        EXPECT_EQ(threads_named("zklock-resume"), 1u);
    }
    EXPECT_EQ(process_state(pid), '?');
    expect_no_fault_leftovers();
}

TEST(ProcessFaults, ZooKeeperServer) {
    zt::ZooKeeperServer server;
    check_faults(server, [&] {
        try {
            return server.four_letter_word("ruok", 1s) == "imok";
        } catch (const std::system_error&) {
            return false;
        }
    });
    expect_no_fault_leftovers();
}

TEST(ProcessFaults, RedisServer) {
    zt::RedisServer server;
    check_faults(server, [&] {
        try {
            return server.command({"PING"}, 1s) == "+PONG\r\n";
        } catch (const std::system_error&) {
            return false;
        }
    });
    expect_no_fault_leftovers();
}

TEST(ProcessFaults, PostgresServerEveryProcessOfIt) {
    zt::PostgresServer server;
    ASSERT_FALSE(server.child_pids().empty());
    check_faults(
        server, [&] { return zt::postgres_ready(server.port(), 1s); }, [&] { return server.child_pids(); });
    expect_no_fault_leftovers();
}
