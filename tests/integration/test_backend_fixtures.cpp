// Tests of the Redis, PostgreSQL and memcached real-server fixtures.
#include "process_support.hpp"

#include <zklock/testing/memcached_server.hpp>
#include <zklock/testing/postgres_server.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/redis_server.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using namespace zklock::test;
using zklock::testing::MemcachedServer;
using zklock::testing::PostgresServer;
using zklock::testing::RedisServer;

bool within(const std::string& path, const std::string& dir) {
    return path.compare(0, dir.size(), dir) == 0 &&
           (path.size() == dir.size() || path[dir.size()] == '/' || path[dir.size()] == ' ');
}

// Live processes (zombies have neither a cwd nor a cmdline) whose working
// directory lies in dir or whose command line names it. PostgreSQL's children
// rewrite their command line ("postgres: checkpointer") but keep the data
// directory as their working directory.
std::vector<pid_t> processes_in(const std::filesystem::path& dir) {
    std::vector<pid_t> out;
    const std::string d = dir.string();
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto pid = static_cast<pid_t>(std::stol(name));
        if (pid == ::getpid()) continue;
        std::error_code cwd_error;
        const auto cwd = std::filesystem::read_symlink(entry.path() / "cwd", cwd_error);
        if ((!cwd_error && within(cwd.string(), d)) || read_cmdline(entry.path()).find(d) != std::string::npos) {
            out.push_back(pid);
        }
    }
    return out;
}

bool process_gone(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return true;
    return stat[close + 2] == 'Z' || stat[close + 2] == 'X';
}

std::error_code redis_error(std::uint16_t port, const std::vector<std::string>& args, milliseconds timeout) {
    try {
        zklock::testing::redis_command(port, args, timeout);
        return {};
    } catch (const std::system_error& e) {
        return e.code();
    }
}

bool answers_pong(RedisServer& server) {
    try {
        return server.command({"PING"}, 1s) == "+PONG\r\n";
    } catch (const std::system_error&) {
        return false;
    }
}

// Forks a child that runs start_and_crash(report): it starts a server, calls
// report("pid dir") (which writes the line to a pipe) and abort()s with the
// server still running. Returns the line.
using Report = std::function<void(const std::string&)>;
std::string crash_with_server(const std::function<void(const Report&)>& start_and_crash) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
    const pid_t child = ::fork();
    if (child < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (child == 0) {
        ::close(fds[0]);
        try {
            start_and_crash([&](const std::string& text) {
                const std::string line = text + "\n";
                if (::write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(2);
            });
        } catch (...) {
            ::_exit(1);
        }
        ::_exit(3);  // start_and_crash must not return
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
    EXPECT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << zklock::testing::describe_wait_status(status);
    return line;
}

// --- RESP --------------------------------------------------------------------

TEST(RespTest, ReplyLengthNeedsACompleteReply) {
    using zklock::testing::resp_reply_length;
    EXPECT_EQ(resp_reply_length("+PONG\r\n"), 7U);
    EXPECT_EQ(resp_reply_length("+PONG\r\nextra"), 7U);
    EXPECT_EQ(resp_reply_length("+PON"), std::nullopt);
    EXPECT_EQ(resp_reply_length("$-1\r\n"), 5U);
    EXPECT_EQ(resp_reply_length("$3\r\nba"), std::nullopt);
    EXPECT_EQ(resp_reply_length("$3\r\nbar\r\n"), 9U);
    EXPECT_EQ(resp_reply_length("*2\r\n$3\r\nbar\r\n"), std::nullopt);
    EXPECT_EQ(resp_reply_length("*2\r\n$3\r\nbar\r\n$-1\r\n"), 18U);
    EXPECT_EQ(resp_reply_length("*-1\r\n"), 5U);
    EXPECT_EQ(resp_reply_length("%1\r\n+a\r\n:1\r\n"), 12U);
    EXPECT_EQ(resp_reply_length("|1\r\n+k\r\n+v\r\n:5\r\n"), 16U);
    EXPECT_EQ(resp_reply_length(""), std::nullopt);
    EXPECT_THROW((void)resp_reply_length("?\r\n"), std::runtime_error);
}

// --- RedisServer -------------------------------------------------------------

TEST(RedisServerTest, StartsAndAnswersPing) {
    RedisServer server;
    EXPECT_TRUE(server.running());
    EXPECT_NE(server.port(), 0);
    EXPECT_EQ(server.host(), "127.0.0.1");
    EXPECT_EQ(server.connect_string(), "127.0.0.1:" + std::to_string(server.port()));
    EXPECT_EQ(server.command({"PING"}), "+PONG\r\n");
    EXPECT_GT(server.pid(), 0);
    EXPECT_TRUE(std::filesystem::exists(server.log_path()));
    EXPECT_EQ(server.command({"CONFIG", "GET", "appendonly"}), "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
    EXPECT_EQ(server.command({"CONFIG", "GET", "save"}), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
}

TEST(RedisServerTest, CommandReturnsRawReplies) {
    RedisServer server;
    EXPECT_EQ(server.command({"SET", "foo", "bar"}), "+OK\r\n");
    EXPECT_EQ(server.command({"GET", "foo"}), "$3\r\nbar\r\n");
    EXPECT_EQ(server.command({"GET", "missing"}), "$-1\r\n");
    EXPECT_EQ(server.command({"INCR", "counter"}), ":1\r\n");
    EXPECT_EQ(server.command({"MGET", "foo", "missing"}), "*2\r\n$3\r\nbar\r\n$-1\r\n");
    EXPECT_EQ(server.command({"SET", "spaced", "a b\r\nc"}), "+OK\r\n");
    EXPECT_EQ(server.command({"GET", "spaced"}), "$6\r\na b\r\nc\r\n");
    EXPECT_EQ(server.command({"INCR", "foo"}).rfind("-ERR", 0), 0U);
    EXPECT_EQ(server.command({"FLUSHALL"}), "+OK\r\n");
    EXPECT_EQ(server.command({"GET", "foo"}), "$-1\r\n");
    EXPECT_THROW(server.command({}), std::invalid_argument);
}

TEST(RedisServerTest, FiveAtOnceOnDistinctPorts) {
    std::vector<std::unique_ptr<RedisServer>> servers;
    for (int i = 0; i < 5; ++i) servers.push_back(std::make_unique<RedisServer>());
    std::set<std::uint16_t> ports;
    std::set<std::filesystem::path> dirs;
    for (std::size_t i = 0; i < servers.size(); ++i) {
        ports.insert(servers[i]->port());
        dirs.insert(servers[i]->directory());
        EXPECT_EQ(servers[i]->command({"PING"}), "+PONG\r\n");
        EXPECT_EQ(servers[i]->command({"SET", "who", std::to_string(i)}), "+OK\r\n");
    }
    EXPECT_EQ(ports.size(), 5U);
    EXPECT_EQ(dirs.size(), 5U);
    for (std::size_t i = 0; i < servers.size(); ++i) {
        EXPECT_EQ(servers[i]->command({"GET", "who"}), "$1\r\n" + std::to_string(i) + "\r\n");
    }
}

TEST(RedisServerTest, RestartWithoutPersistenceLosesKeys) {
    RedisServer server;
    const auto port = server.port();
    const auto first_pid = server.pid();
    ASSERT_EQ(server.command({"SET", "lock", "owner"}), "+OK\r\n");
    server.restart();
    EXPECT_EQ(server.port(), port);
    EXPECT_NE(server.pid(), first_pid);
    EXPECT_EQ(server.command({"GET", "lock"}), "$-1\r\n");

    ASSERT_EQ(server.command({"SET", "lock", "owner"}), "+OK\r\n");
    server.kill9();
    server.restart();
    EXPECT_EQ(server.port(), port);
    EXPECT_EQ(server.command({"GET", "lock"}), "$-1\r\n");
}

TEST(RedisServerTest, PersistenceKeepsKeysAcrossRestartAndKill9) {
    zklock::testing::RedisServerOptions options;
    options.persistence = true;
    RedisServer server(options);
    ASSERT_EQ(server.command({"SET", "lock", "owner"}), "+OK\r\n");
    server.restart();
    EXPECT_EQ(server.command({"GET", "lock"}), "$5\r\nowner\r\n");
    ASSERT_EQ(server.command({"SET", "lock", "other"}), "+OK\r\n");
    server.kill9();
    server.restart();
    EXPECT_EQ(server.command({"GET", "lock"}), "$5\r\nother\r\n");
}

TEST(RedisServerTest, StopRefusesConnections) {
    RedisServer server;
    const auto port = server.port();
    server.stop();
    EXPECT_FALSE(server.running());
    EXPECT_EQ(server.pid(), -1);
    EXPECT_EQ(redis_error(port, {"PING"}, 2s), std::errc::connection_refused);
    server.stop();  // no-op
    server.restart();
    EXPECT_EQ(server.port(), port);
    EXPECT_EQ(server.command({"PING"}), "+PONG\r\n");
}

TEST(RedisServerTest, PauseMakesPingTimeOutAndResumeAnswers) {
    RedisServer server;
    server.pause();
    EXPECT_TRUE(server.paused());
    EXPECT_TRUE(server.running());
    EXPECT_EQ(redis_error(server.port(), {"PING"}, 300ms), std::errc::timed_out);
    server.resume();
    EXPECT_FALSE(server.paused());
    EXPECT_TRUE(eventually([&] { return answers_pong(server); }, 10s));

    server.pause();
    const auto before_stop = std::chrono::steady_clock::now();
    server.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - before_stop, 4s) << "a paused server must still stop on SIGTERM";
    EXPECT_FALSE(server.running());
}

TEST(RedisServerTest, Kill9LeavesNoProcess) {
    RedisServer server;
    const pid_t pid = server.pid();
    const auto port = server.port();
    ASSERT_GT(pid, 0);
    server.kill9();
    EXPECT_FALSE(server.running());
    EXPECT_EQ(server.pid(), -1);
    EXPECT_TRUE(process_gone(pid));
    EXPECT_TRUE(processes_in(server.directory()).empty());
    EXPECT_EQ(redis_error(port, {"PING"}, 2s), std::errc::connection_refused);
}

TEST(RedisServerTest, DestructionLeavesNoProcessOrDirectory) {
    std::filesystem::path dir;
    {
        RedisServer server;
        dir = server.directory();
        ASSERT_FALSE(processes_in(dir).empty());
    }
    EXPECT_TRUE(processes_in(dir).empty());
    EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(RedisServerTest, FailedStartReportsTheLog) {
    zklock::testing::RedisServerOptions options;
    options.extra_args = {"--no-such-option", "x"};
    try {
        RedisServer server(options);
        FAIL() << "a server with a bad option started";
    } catch (const std::runtime_error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("failed to start"), std::string::npos) << message;
        EXPECT_NE(message.find("last lines"), std::string::npos) << message;
        EXPECT_NE(message.find("no-such-option"), std::string::npos) << message;
    }
}

// The secrets of a server: in its 0600 config file, on no process's command line.
void expect_secret_kept_private(RedisServer& server, const std::string& secret) {
    struct stat st {};
    ASSERT_EQ(::stat(server.config_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U) << server.config_path();
    const auto cmdline = read_cmdline("/proc/" + std::to_string(server.pid()));
    EXPECT_FALSE(cmdline.empty());
    EXPECT_EQ(cmdline.find(secret), std::string::npos) << "the secret is on the command line: " << cmdline;
}

TEST(RedisServerTest, RequirepassRefusesStrangersAndTheFixtureAuthenticates) {
    zklock::testing::RedisServerOptions options;
    options.password = "fixture pass\"word'42";  // blanks and quotes survive the config file
    RedisServer server(options);
    using zklock::testing::redis_command;
    EXPECT_EQ(redis_command(server.port(), {"PING"}, 5s).rfind("-NOAUTH", 0), 0U);
    EXPECT_EQ(redis_command(server.port(), {"PING"}, 5s, {"", "wrong"}).rfind("-WRONGPASS", 0), 0U);
    EXPECT_EQ(redis_command(server.port(), {"PING"}, 5s, {"", options.password}), "+PONG\r\n");
    EXPECT_EQ(server.admin().password, options.password);
    EXPECT_EQ(server.command({"SET", "k", "v"}), "+OK\r\n");
    expect_secret_kept_private(server, "fixture");
    server.restart();  // the probes and SHUTDOWN authenticate too
    EXPECT_EQ(server.command({"GET", "k"}), "$-1\r\n");
}

TEST(RedisServerTest, AclUsersGetInAndTheDefaultUserIsOff) {
    zklock::testing::RedisServerOptions options;
    options.users = {{"alice", "alice-secret-1"}, {"bob", "bob-secret-2"}};
    RedisServer server(options);
    using zklock::testing::redis_command;
    EXPECT_EQ(redis_command(server.port(), {"PING"}, 5s).rfind("-NOAUTH", 0), 0U);
    EXPECT_EQ(redis_command(server.port(), {"PING"}, 5s, {"default", "x"}).rfind("-WRONGPASS", 0), 0U);
    EXPECT_EQ(redis_command(server.port(), {"PING"}, 5s, {"alice", "bob-secret-2"}).rfind("-WRONGPASS", 0), 0U);
    EXPECT_EQ(redis_command(server.port(), {"ACL", "WHOAMI"}, 5s, {"bob", "bob-secret-2"}), "$3\r\nbob\r\n");
    EXPECT_EQ(server.admin().user, "alice");
    EXPECT_EQ(server.command({"ACL", "WHOAMI"}), "$5\r\nalice\r\n");
    expect_secret_kept_private(server, "secret");
}

TEST(RedisServerTest, CrashedParentLeavesNoServer) {
    const std::string line = crash_with_server([](const Report& report) {
        RedisServer server;
        report(std::to_string(server.pid()) + " " + server.directory().string());
        std::abort();
    });
    std::istringstream in(line);
    pid_t pid = -1;
    std::string dir;
    in >> pid >> dir;
    ASSERT_GT(pid, 0) << "child wrote: '" << line << "'";
    ASSERT_FALSE(dir.empty());
    EXPECT_TRUE(eventually([&] { return process_gone(pid) && processes_in(dir).empty(); }, 10s));
    std::filesystem::remove_all(dir);
}

// --- PostgresServer ----------------------------------------------------------

TEST(PostgresServerTest, StartsAndAnswersSelect1) {
    PostgresServer server;
    EXPECT_TRUE(server.running());
    EXPECT_NE(server.port(), 0);
    EXPECT_EQ(server.host(), "127.0.0.1");
    EXPECT_EQ(server.connect_string(),
              "host=127.0.0.1 port=" + std::to_string(server.port()) + " user=postgres dbname=postgres");
    EXPECT_EQ(server.psql("select 1"), "1\n");
    EXPECT_EQ(server.psql("show fsync"), "off\n");
    EXPECT_EQ(server.psql("show max_connections"), "200\n");
    EXPECT_EQ(server.psql("select current_user"), "postgres\n");
    EXPECT_TRUE(zklock::testing::postgres_ready(server.port(), 2s));
    EXPECT_GT(server.pid(), 0);
    EXPECT_FALSE(server.child_pids().empty());
    EXPECT_TRUE(std::filesystem::is_directory(server.data_dir()));
    EXPECT_TRUE(std::filesystem::exists(server.log_path()));
    if (::geteuid() == 0) {
        std::ifstream status("/proc/" + std::to_string(server.pid()) + "/status");
        std::string text((std::istreambuf_iterator<char>(status)), std::istreambuf_iterator<char>());
        EXPECT_EQ(text.find("\nUid:\t0\t"), std::string::npos) << "the postmaster runs as root";
    }
}

// psql as a stranger would run it: `env` in its environment; its exit status
// and what it printed.
std::pair<int, std::string> psql_as(PostgresServer& server, std::vector<std::pair<std::string, std::string>> env) {
    zklock::testing::TempDir dir("zklock-psql-");
    zklock::testing::ChildProcessOptions o;
    o.output_path = dir.path() / "out";
    o.env = std::move(env);
    zklock::testing::ChildProcess p({"/usr/lib/postgresql/15/bin/psql", "-X", "-A", "-t", "-d", server.connect_string(),
                                     "-c", "select 1"},
                                    o);
    const auto status = p.wait_exit(30s);
    std::ifstream in(dir.path() / "out");
    std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return {status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1, out};
}

TEST(PostgresServerTest, PasswordIsRequiredAndOnNoCommandLine) {
    zklock::testing::PostgresServerOptions options;
    options.password = "pg pass'word:\\42";  // blanks, quotes, ':' and '\\' survive the files
    PostgresServer server(options);
    EXPECT_EQ(server.psql("select 1"), "1\n");  // the fixture's own client: through PGPASSFILE
    EXPECT_EQ(server.connect_string().find("pass"), std::string::npos);
    // Strangers get nothing.
    auto [status, out] = psql_as(server, {{"PGPASSFILE", "/dev/null"}, {"PGPASSWORD", ""}});
    EXPECT_NE(status, 0) << out;
    EXPECT_NE(out.find("password"), std::string::npos) << out;
    std::tie(status, out) = psql_as(server, {{"PGPASSFILE", "/dev/null"}, {"PGPASSWORD", "wrong"}});
    EXPECT_NE(status, 0) << out;
    EXPECT_NE(out.find("password authentication failed"), std::string::npos) << out;
    std::tie(status, out) = psql_as(server, {{"PGPASSFILE", "/dev/null"}, {"PGPASSWORD", options.password}});
    EXPECT_EQ(status, 0) << out;
    // The secret: in the 0600 password file only; initdb's file is gone.
    struct stat st {};
    ASSERT_EQ(::stat(server.pgpass_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U);
    EXPECT_FALSE(std::filesystem::exists(server.directory() / "initdb-pwfile"));
    const auto cmdline = read_cmdline("/proc/" + std::to_string(server.pid()));
    EXPECT_FALSE(cmdline.empty());
    EXPECT_EQ(cmdline.find("pass"), std::string::npos) << cmdline;
    server.restart();  // the readiness probe copes with a password
    EXPECT_EQ(server.psql("select 2"), "2\n");
}

TEST(PostgresServerTest, PsqlReportsSqlErrors) {
    PostgresServer server;
    try {
        server.psql("select * from no_such_table");
        FAIL() << "psql did not throw";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    }
    EXPECT_EQ(server.psql("create table t(k text primary key, v int)"), "");
    EXPECT_EQ(server.psql("insert into t values ('a', 1), ('b', 2)"), "");
    EXPECT_EQ(server.psql("select k, v from t order by k"), "a|1\nb|2\n");
}

TEST(PostgresServerTest, RestartAndKill9KeepData) {
    PostgresServer server;
    const auto port = server.port();
    const auto first_pid = server.pid();
    server.psql("create table t(v int); insert into t values (42)");
    server.restart();
    EXPECT_EQ(server.port(), port);
    EXPECT_NE(server.pid(), first_pid);
    EXPECT_EQ(server.psql("select v from t"), "42\n");

    server.psql("insert into t values (43)");
    server.kill9();
    EXPECT_FALSE(server.running());
    server.restart();  // crash recovery
    EXPECT_EQ(server.port(), port);
    EXPECT_EQ(server.psql("select v from t order by v"), "42\n43\n");
}

TEST(PostgresServerTest, StopRefusesConnections) {
    PostgresServer server;
    const auto port = server.port();
    server.stop();
    EXPECT_FALSE(server.running());
    EXPECT_EQ(server.pid(), -1);
    EXPECT_TRUE(server.child_pids().empty());
    EXPECT_FALSE(zklock::testing::postgres_ready(port, 1s));
    EXPECT_THROW(server.psql("select 1"), std::runtime_error);
    EXPECT_TRUE(processes_in(server.data_dir()).empty());
}

TEST(PostgresServerTest, Kill9KillsEveryProcessOfTheServer) {
    PostgresServer server;
    std::vector<pid_t> pids = server.child_pids();
    ASSERT_FALSE(pids.empty());
    pids.push_back(server.pid());
    const auto dir = server.data_dir();
    ASSERT_FALSE(processes_in(dir).empty());
    server.kill9();
    EXPECT_FALSE(server.running());
    for (const pid_t pid : pids) EXPECT_TRUE(process_gone(pid)) << pid;
    EXPECT_TRUE(processes_in(dir).empty());
}

TEST(PostgresServerTest, PauseFreezesTheServerAndResumeThaws) {
    PostgresServer server;
    server.pause();
    EXPECT_TRUE(server.paused());
    EXPECT_TRUE(server.running());
    EXPECT_FALSE(zklock::testing::postgres_ready(server.port(), 300ms));
    EXPECT_THROW(server.psql("select 1", 500ms), std::runtime_error);
    server.resume();
    EXPECT_FALSE(server.paused());
    EXPECT_EQ(server.psql("select 1"), "1\n");

    server.pause();
    const auto before_stop = std::chrono::steady_clock::now();
    server.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - before_stop, 8s) << "a paused server must still stop";
    EXPECT_FALSE(server.running());
}

TEST(PostgresServerTest, TwoAtOnce) {
    PostgresServer a;
    PostgresServer b;
    EXPECT_NE(a.port(), b.port());
    a.psql("create table only_a(v int)");
    EXPECT_EQ(a.psql("select count(*) from pg_tables where tablename = 'only_a'"), "1\n");
    EXPECT_EQ(b.psql("select count(*) from pg_tables where tablename = 'only_a'"), "0\n");
}

TEST(PostgresServerTest, DestructionLeavesNoProcessOrDirectory) {
    std::filesystem::path dir;
    std::filesystem::path data;
    {
        PostgresServer server;
        dir = server.directory();
        data = server.data_dir();
        ASSERT_GE(processes_in(data).size(), 2U) << "the postmaster and its children";
    }
    EXPECT_TRUE(processes_in(data).empty());
    EXPECT_TRUE(processes_in(dir).empty());
    EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(PostgresServerTest, CrashedParentLeavesNoServer) {
    const std::string line = crash_with_server([](const Report& report) {
        PostgresServer server;
        report(std::to_string(server.pid()) + " " + server.directory().string());
        std::abort();
    });
    std::istringstream in(line);
    pid_t pid = -1;
    std::string dir;
    in >> pid >> dir;
    ASSERT_GT(pid, 0) << "child wrote: '" << line << "'";
    ASSERT_FALSE(dir.empty());
    EXPECT_TRUE(eventually([&] { return process_gone(pid) && processes_in(dir).empty(); }, 20s))
        << "left behind: " << processes_in(dir).size() << " processes";
    std::filesystem::remove_all(dir);
}

TEST(PostgresServerTest, FailedStartReportsTheLog) {
    zklock::testing::PostgresServerOptions options;
    options.extra_args = {"-c", "no_such_setting=1"};
    try {
        PostgresServer server(options);
        FAIL() << "a server with a bad setting started";
    } catch (const std::runtime_error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("failed to start"), std::string::npos) << message;
        EXPECT_NE(message.find("no_such_setting"), std::string::npos) << message;
    }
}

}  // namespace

namespace {

// One server for every fault: a start costs little, but each is a process.
TEST(MemcachedServerTest, AnswersStoresLosesEverythingOnRestartAndLeavesNothing) {
    std::filesystem::path dir;
    std::uint16_t port = 0;
    {
        MemcachedServer server;
        port = server.port();
        EXPECT_TRUE(server.running());
        EXPECT_EQ(server.connect_string(), "127.0.0.1:" + std::to_string(port));
        EXPECT_FALSE(server.version().empty());
        EXPECT_EQ(server.command("add lock 0 60 5\r\nowner"), "STORED\r\n");
        EXPECT_EQ(server.command("add lock 0 60 5\r\nother"), "NOT_STORED\r\n");
        EXPECT_EQ(server.command("get lock"), "VALUE lock 0 5\r\nowner\r\nEND\r\n");
        EXPECT_EQ(server.command("get missing"), "END\r\n");
        const auto first_pid = server.pid();
        server.restart();  // memcached keeps nothing: the restarted server is empty
        EXPECT_EQ(server.port(), port);
        EXPECT_NE(server.pid(), first_pid);
        EXPECT_EQ(server.command("get lock"), "END\r\n");
        EXPECT_EQ(server.command("add lock 0 60 5\r\nowner"), "STORED\r\n");
        EXPECT_EQ(server.command("delete lock"), "DELETED\r\n");
        EXPECT_EQ(server.command("delete lock"), "NOT_FOUND\r\n");
        if (::geteuid() == 0) {  // memcached refuses root: the fixture runs it as another user
            std::ifstream status("/proc/" + std::to_string(server.pid()) + "/status");
            std::string line;
            while (std::getline(status, line) && !line.starts_with("Uid:")) {
            }
            EXPECT_EQ(line.find("\t0\t"), std::string::npos) << line;
        }
        server.kill9();
        EXPECT_FALSE(server.running());
        try {
            server.command("version", 2s);
            ADD_FAILURE() << "a killed server answered";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), std::errc::connection_refused) << e.what();
        }
        server.restart();
        dir = server.log_path().parent_path();
        ASSERT_FALSE(processes_in(dir).empty());
    }
    EXPECT_TRUE(processes_in(dir).empty());
    EXPECT_FALSE(std::filesystem::exists(dir));
}

} // namespace
