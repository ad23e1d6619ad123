// `zklock bench` against password-protected PostgreSQL and Redis servers: the
// passwords reach the servers (the runs and the pgbench baseline succeed) and
// appear nowhere else: not in stdout or stderr, not in the report's files, not
// on the command line of any process the bench starts.
#include "support.hpp"

#include <zklock/testing/mariadb_server.hpp>
#include <zklock/testing/postgres_server.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/redis_server.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <sys/wait.h>

namespace zklock::test {
namespace {

using testing::ChildProcess;
using testing::ChildProcessOptions;
using testing::TempDir;

constexpr const char* pg_secret = "pg-Secret-4f1e";
constexpr const char* redis_secret = "redis-Secret-9c2a";


/// Parent of every live process, from /proc/PID/stat.
std::map<pid_t, pid_t> parents() {
    std::map<pid_t, pid_t> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto stat = read_file(entry.path() / "stat");
        const auto close = stat.rfind(')');
        if (close == std::string::npos || close + 4 >= stat.size()) continue;
        try {
            out[static_cast<pid_t>(std::stol(name))] = static_cast<pid_t>(std::stol(stat.substr(close + 4)));
        } catch (const std::exception&) {
        }
    }
    return out;
}

/// Records the command line of every descendant `root` has now. A child forked
/// but not yet exec'd shows zklock's own command line, which run_zklock checks
/// by itself: lines equal to zklock's are skipped here.
void record_command_lines(pid_t root, std::map<pid_t, std::set<std::string>>& seen) {
    const auto parent = parents();
    std::set<pid_t> family{root};
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [pid, ppid] : parent)
            if (family.count(ppid) && family.insert(pid).second) grew = true;
    }
    const auto command_line = [](pid_t pid) {
        auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
        for (auto& c : cmdline)
            if (c == '\0') c = ' ';
        return cmdline;
    };
    const auto own = command_line(root);
    for (const pid_t pid : family) {
        if (pid == root) continue;
        const auto cmdline = command_line(pid);
        if (!cmdline.empty() && cmdline != own) seen[pid].insert(cmdline);
    }
}

struct bench_run {
    int exit_code = -1;
    std::string output;                                  // stdout and stderr
    std::map<pid_t, std::set<std::string>> command_lines;  // of every descendant of zklock, as seen while it ran
    std::string own_command_line;  // zklock's own, read once it had written its first output
};

/// Runs the built `zklock` with `args`, scanning /proc for its descendants'
/// command lines until it exits.
bench_run run_zklock(const TempDir& dir, std::vector<std::string> args) {
    args.insert(args.begin(), ZKLOCK_CLI_PATH);
    ChildProcessOptions o;
    o.output_path = dir.path() / "zklock.out";
    ChildProcess zklock(std::move(args), o);
    bench_run run;
    const auto exited = wait_until(
        [&] {
            // zklock takes the secrets out of its own command line first thing in
            // main(); once it has written anything, that has long happened.
            if (run.own_command_line.empty() && !read_file(dir.path() / "zklock.out").empty()) {
                run.own_command_line = read_file("/proc/" + std::to_string(zklock.pid()) + "/cmdline");
                for (auto& c : run.own_command_line)
                    if (c == '\0') c = ' ';
            }
            record_command_lines(zklock.pid(), run.command_lines);
            return !zklock.running();
        },
        std::chrono::minutes(4));
    EXPECT_TRUE(exited) << "zklock bench did not finish";
    const auto status = zklock.wait_exit(std::chrono::seconds(exited ? 10 : 0));
    if (status && WIFEXITED(*status)) run.exit_code = WEXITSTATUS(*status);
    run.output = read_file(dir.path() / "zklock.out");
    return run;
}

void expect_no_secret(const std::string& where, const std::string& text) {
    for (const char* secret : {pg_secret, redis_secret})
        EXPECT_EQ(text.find(secret), std::string::npos) << "the secret '" << secret << "' is in " << where << ":\n" << text;
}

bool ran(const bench_run& r, const std::string& program) {
    for (const auto& [pid, lines] : r.command_lines)
        for (const auto& line : lines)
            if (line.starts_with(program + " ") || line.find("/" + program + " ") != std::string::npos) return true;
    return false;
}

TEST(BenchSecrets, PasswordsInTheConninfoAndTheUrlAppearNowhere) {
    testing::PostgresServerOptions pg_options;
    pg_options.password = pg_secret;
    testing::PostgresServer postgres(pg_options);
    testing::RedisServerOptions redis_options;
    redis_options.password = redis_secret;
    testing::RedisServer redis(redis_options);

    TempDir dir("zklock-bench-secrets-");
    const auto report = dir.path() / "report";
    const auto run = run_zklock(dir, {"bench", "--backend", "redis,postgres-advisory", "--baselines", "--report",
                                      report.string(), "--clients", "1", "--ops", "50",
                                      "--warmup", "10", "--postgres", postgres.connect_string() + " password=" + pg_secret,
                                      "--redis", "redis://:" + std::string(redis_secret) + "@" + redis.connect_string()});
    ASSERT_EQ(run.exit_code, 0) << run.output;

    // The passwords got through: both backends ran, and pgbench (PGPASSFILE) too.
    const auto results = nlohmann::json::parse(read_file(report / "results.json"));
    std::set<std::string> measured;
    for (const auto& r : results["results"]) measured.insert(r["backend"].get<std::string>());
    EXPECT_EQ(measured, (std::set<std::string>{"redis", "postgres-advisory"}));
    ASSERT_EQ(results["baselines"].size(), 1U) << results["baselines"].dump();
    EXPECT_EQ(results["baselines"][0]["tool"], "pgbench");
    EXPECT_TRUE(ran(run, "pgbench")) << "pgbench was never seen running";
    // redis-benchmark could only have had the password on its command line: not run, and said why.
    ASSERT_EQ(results["baselines_not_run"].size(), 1U) << results["baselines_not_run"].dump();
    EXPECT_EQ(results["baselines_not_run"][0]["tool"], "redis-benchmark");
    EXPECT_FALSE(ran(run, "redis-benchmark"));
    // Redacted, not dropped: the report still says how it was run.
    EXPECT_NE(results["command"].get<std::string>().find("password=***"), std::string::npos) << results["command"];
    EXPECT_NE(results["command"].get<std::string>().find("redis://:***@"), std::string::npos) << results["command"];

    expect_no_secret("stdout/stderr", run.output);
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(report)) {
        ++files;
        expect_no_secret(entry.path().string(), read_file(entry.path()));
    }
    EXPECT_GE(files, 2U);
    EXPECT_TRUE(std::filesystem::exists(report / "results.md"));
    EXPECT_GE(run.command_lines.size(), 1U) << "no process started by the bench was seen";
    for (const auto& [pid, lines] : run.command_lines)
        for (const auto& line : lines) expect_no_secret("the command line of process " + std::to_string(pid), line);
    // zklock's own: the user typed the passwords there, every local user can read it.
    EXPECT_NE(run.own_command_line.find("bench"), std::string::npos) << "zklock's command line never read";
    expect_no_secret("zklock's own command line", run.own_command_line);
}

TEST(BenchSecrets, RedisPasswordFromTheAuthFileReachesTheServer) {
    testing::RedisServerOptions redis_options;
    redis_options.users = {{"benchuser", redis_secret}};  // the default user is off: only this user gets in
    testing::RedisServer redis(redis_options);

    TempDir dir("zklock-bench-secrets-");
    const auto auth_file = dir.path() / "auth";
    std::ofstream(auth_file) << "redis:benchuser:" << redis_secret << "\n";
    std::filesystem::permissions(auth_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    const auto run = run_zklock(dir, {"bench", "--backend", "redis,redlock", "--baselines", "--json", "--scenario",
                                      "uncontended", "--clients", "1", "--ops", "20", "--warmup", "0", "--auth-file",
                                      auth_file.string(), "--redis", redis.connect_string()});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    // redis ran on the user's server, redlock on five throwaway ones that require the same user.
    EXPECT_NE(run.output.find("\"backend\":\"redis\""), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("\"backend\":\"redlock\""), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("no redis-benchmark baseline"), std::string::npos) << run.output;
    expect_no_secret("stdout/stderr", run.output);
    for (const auto& [pid, lines] : run.command_lines)
        for (const auto& line : lines) expect_no_secret("the command line of process " + std::to_string(pid), line);
}

TEST(BenchSecrets, AWrongPasswordExitsWithNoPermissionAndNamesNoSecret) {
    testing::RedisServerOptions redis_options;
    redis_options.password = redis_secret;
    testing::RedisServer redis(redis_options);
    TempDir dir("zklock-bench-secrets-");
    const std::string wrong = std::string(pg_secret) + "-wrong";  // pg_secret is among those searched for
    const auto run = run_zklock(dir, {"bench", "--backend", "redis", "--scenario", "uncontended", "--ops", "5",
                                      "--warmup", "0", "--redis", "redis://:" + wrong + "@" + redis.connect_string()});
    EXPECT_EQ(run.exit_code, 77) << run.output;  // EX_NOPERM
    EXPECT_NE(run.output.find("authentication failed"), std::string::npos) << run.output;
    expect_no_secret("stdout/stderr", run.output);
}

// A MySQL password given in the --mysql URL, or on the auth file's mysql: line,
// reaches the server and appears in no output and on no command line.
TEST(BenchSecrets, MysqlPasswordInTheUrlOrTheAuthFileAppearsNowhere) {
    constexpr const char* maria_secret = "maria-Secret-71d0";
    testing::MariaDBServerOptions options;
    options.password = maria_secret;
    testing::MariaDBServer server(options);
    const auto url = [&](const std::string& userinfo) {
        return "mysql://" + userinfo + "@127.0.0.1:" + std::to_string(server.port()) + "/zklock";
    };
    TempDir dir("zklock-bench-secrets-");
    const auto auth_file = dir.path() / "auth";
    std::ofstream(auth_file) << "mysql:zklock:" << maria_secret << "\n";
    std::filesystem::permissions(auth_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    const std::vector<std::vector<std::string>> ways = {
        {"--mysql", url("zklock:" + std::string(maria_secret))},
        {"--mysql", url("zklock"), "--auth-file", auth_file.string()}};
    for (const auto& way : ways) {
        std::vector<std::string> args{"bench", "--backend", "mysql-advisory,mysql-lease", "--json", "--scenario",
                                      "uncontended", "--clients", "1", "--ops", "20", "--warmup", "0"};
        args.insert(args.end(), way.begin(), way.end());
        const auto run = run_zklock(dir, args);
        ASSERT_EQ(run.exit_code, 0) << run.output;
        EXPECT_NE(run.output.find("\"backend\":\"mysql-advisory\""), std::string::npos) << run.output;
        EXPECT_NE(run.output.find("\"backend\":\"mysql-lease\""), std::string::npos) << run.output;
        EXPECT_EQ(run.output.find(maria_secret), std::string::npos) << run.output;
        for (const auto& [pid, lines] : run.command_lines)
            for (const auto& line : lines) EXPECT_EQ(line.find(maria_secret), std::string::npos) << line;
        EXPECT_EQ(run.own_command_line.find(maria_secret), std::string::npos) << run.own_command_line;
    }
}

} // namespace
} // namespace zklock::test
