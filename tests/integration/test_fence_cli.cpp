// `zklock fence check|write`: a file resource for shell jobs run under
// `zklock run`. A run whose process group is stopped past its session timeout
// gets its late write refused.
#include "fence_support.hpp"
#include "test_cli_support.hpp"

#include <cerrno>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zklock::test::cli {
namespace {

// `zklock fence write [ARGS] FILE` with `data` on its stdin.
std::vector<std::string> write_argv(const std::string& data, std::vector<std::string> args) {
    std::vector<std::string> argv{"sh", "-c", "d=$1; shift; printf %s \"$d\" | \"$0\" fence write \"$@\"",
                                  ZKLOCK_CLI_PATH, data};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

struct outcome {
    int status;
    std::string output;
};

class FenceCli : public ::testing::Test {
protected:
    outcome run(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env = {}) {
        const auto name = "run" + std::to_string(++runs_);
        ChildProcessOptions o;
        o.output_path = cli_.output_path(name);
        o.env = std::move(env);
        ChildProcess p(std::move(argv), o);
        const int status = exit_code(p);
        return {status, cli_.output(name)};
    }
    outcome write(const std::string& file, const std::string& token, const std::string& data) {
        return run(write_argv(data, {"--token=" + token, file}));
    }
    outcome check(const std::string& resource, const std::string& token) {
        return run({ZKLOCK_CLI_PATH, "fence", "check", "--token=" + token, resource});
    }
    std::string record(const std::filesystem::path& resource) { return read_file(resource.string() + ".zklock-fence"); }

    Cli cli_;
    int runs_ = 0;
};

TEST_F(FenceCli, PausedRunHoldersLateWriteIsRefused) {
    testing::ZooKeeperServer zk(fence::zookeeper_options());
    const std::string path = "/zklock-tests/fence/cli";
    const auto resource = cli_.file("report.txt");
    const auto go = cli_.file("go");
    ASSERT_EQ(::mkfifo(go.c_str(), 0600), 0);
    // A writes once, tells it has (its writer has exited: no record lock is held
    // while A is stopped), waits on the fifo, then writes again: its late write.
    // It ignores SIGTERM, so `zklock run` noticing the loss does not stop it first.
    const std::string job_a =
        "trap '' TERM; printf A1 | \"$0\" fence write \"$2\" || exit $?; echo \"$ZKLOCK_FENCING_TOKEN\" > \"$1\"; "
        "read line < \"$3\"; printf A-late | \"$0\" fence write \"$2\"; s=$?; echo $s > \"$4\"; exit $s";
    auto a = cli_.start({"run", "-c", zk.connect_string(), "--session-timeout", "1000", "--grace", "60000", path, "--",
                         "sh", "-c", job_a, ZKLOCK_CLI_PATH, cli_.file("token-a").string(), resource.string(),
                         go.string(), cli_.file("status-a").string()},
                        "a");
    const auto token_a = std::stoll(wait_for_line(cli_.file("token-a")));
    ASSERT_EQ(read_file(resource), "A1") << cli_.output("a");
    ASSERT_TRUE(a.pause());  // zklock run and its job: SIGSTOP to the process group

    // B waits until the server has expired A's session, then writes.
    const std::string job_b = "echo \"$ZKLOCK_FENCING_TOKEN\" > \"$1\"; printf B | \"$0\" fence write \"$2\"";
    auto b = cli_.start({"run", "-c", zk.connect_string(), path, "--", "sh", "-c", job_b, ZKLOCK_CLI_PATH,
                         cli_.file("token-b").string(), resource.string()},
                        "b");
    ASSERT_EQ(exit_code(b), 0) << cli_.output("b");
    const auto token_b = std::stoll(wait_for_line(cli_.file("token-b")));
    EXPECT_GT(token_b, token_a);
    EXPECT_EQ(read_file(resource), "B");

    ASSERT_TRUE(a.resume());
    int fifo = -1;  // A's job is (or is about to be) blocked opening the fifo to read
    ASSERT_TRUE(wait_until([&] { return (fifo = ::open(go.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0; }))
        << cli_.output("a");
    ASSERT_EQ(::write(fifo, "go\n", 3), 3);
    ::close(fifo);
    EXPECT_EQ(exit_code(a), 76) << cli_.output("a");
    EXPECT_EQ(wait_for_line(cli_.file("status-a")), "76") << "the late write was not refused";
    EXPECT_NE(cli_.output("a").find("refused: fencing token " + std::to_string(token_a)), std::string::npos)
        << cli_.output("a");
    EXPECT_EQ(read_file(resource), "B");
    EXPECT_EQ(record(resource), std::to_string(token_b) + "\n");

    SessionOptions so = fence::session_options(zk);
    Session observer(so);
    observer.connect();
    EXPECT_TRUE(wait_until([&] { return list_contenders(observer, path).empty(); }));
}

TEST_F(FenceCli, EqualAndHigherTokensAreAcceptedLowerRefusedWithClearErrors) {
    const auto file = cli_.file("out");
    auto r = write(file.string(), "5", "first");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(read_file(file), "first");
    EXPECT_EQ(record(file), "5\n");
    r = write(file.string(), "5", "again");  // the same holder writing twice
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(read_file(file), "again");
    r = write(file.string(), "7", "higher");
    EXPECT_EQ(r.status, 0) << r.output;
    r = write(file.string(), "6", "stale");
    EXPECT_EQ(r.status, 76);
    EXPECT_NE(r.output.find("refused: fencing token 6 is older than 7"), std::string::npos) << r.output;
    EXPECT_EQ(read_file(file), "higher");
    EXPECT_EQ(record(file), "7\n");
    // Tokens past 2^53 compare exactly.
    EXPECT_EQ(write(file.string(), "9007199254740993", "big").status, 0);
    EXPECT_EQ(write(file.string(), "9007199254740992", "less").status, 76);
    EXPECT_EQ(read_file(file), "big");

    // check: current (and recorded), stale, from $ZKLOCK_FENCING_TOKEN; a directory resource.
    const auto dir = cli_.file("outdir");
    std::filesystem::create_directory(dir);
    EXPECT_EQ(check(dir.string() + "/", "100").status, 0);
    EXPECT_EQ(record(dir), "100\n");
    EXPECT_EQ(check(dir.string(), "100").status, 0);
    EXPECT_EQ(check(dir.string(), "99").status, 76);
    EXPECT_EQ(run({ZKLOCK_CLI_PATH, "fence", "check", dir.string()}, {{"ZKLOCK_FENCING_TOKEN", "101"}}).status, 0);
    EXPECT_EQ(record(dir), "101\n");
    r = run(write_argv("x", {dir.string()}), {{"ZKLOCK_FENCING_TOKEN", "200"}});
    EXPECT_EQ(r.status, 64) << r.output;
    EXPECT_NE(r.output.find("is a directory"), std::string::npos) << r.output;

    // Missing and invalid tokens, a corrupt record: clear errors, nothing written.
    r = run({ZKLOCK_CLI_PATH, "fence", "check", file.string()}, {{"ZKLOCK_FENCING_TOKEN", ""}});
    EXPECT_EQ(r.status, 64);
    EXPECT_NE(r.output.find("no fencing token: give --token TOKEN, or run under `zklock run`"), std::string::npos)
        << r.output;
    for (const char* bad : {"0", "-5", "12abc", "007", "99999999999999999999"}) {
        r = write(file.string(), bad, "bad");
        EXPECT_EQ(r.status, 64) << bad;
        EXPECT_NE(r.output.find(std::string("invalid fencing token '") + bad + "'"), std::string::npos) << r.output;
    }
    r = run({ZKLOCK_CLI_PATH, "fence", "check", file.string()}, {{"ZKLOCK_FENCING_TOKEN", "x1"}});
    EXPECT_EQ(r.status, 64);
    EXPECT_NE(r.output.find("(from $ZKLOCK_FENCING_TOKEN)"), std::string::npos) << r.output;
    EXPECT_EQ(read_file(file), "big");
    const auto corrupt = cli_.file("corrupt");
    std::ofstream(corrupt.string() + ".zklock-fence") << "garbage\n";
    r = write(corrupt.string(), "5", "x");
    EXPECT_EQ(r.status, 65);
    EXPECT_NE(r.output.find("holds no fencing token"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(corrupt));

    // No temporary file is left behind; a new file gets the umask's mode, a replaced one keeps its mode.
    for (const auto& e : std::filesystem::directory_iterator(cli_.dir()))
        EXPECT_NE(e.path().filename().string().front(), '.') << "a temporary file left behind: " << e.path();
    ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
    EXPECT_EQ(write(file.string(), "9007199254740993", "same holder").status, 0);
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(FenceCli, ConcurrentWritersInRandomOrderLeaveTheHighestTokensValue) {
    const auto file = cli_.file("contended");
    const auto seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<std::int64_t> tokens;
    for (std::int64_t t = 1001; t <= 1012; ++t) tokens.push_back(t);
    std::mt19937 rng(seed);
    std::shuffle(tokens.begin(), tokens.end(), rng);
    std::vector<std::pair<std::int64_t, ChildProcess>> writers;
    for (const auto t : tokens) {
        ChildProcessOptions o;
        o.output_path = cli_.output_path("w" + std::to_string(t));
        writers.emplace_back(
            t, ChildProcess(write_argv(fence::value_of(t), {"--token", std::to_string(t), file.string()}), o));
    }
    for (auto& [t, p] : writers) {
        const int status = exit_code(p);
        EXPECT_TRUE(status == 0 || status == 76) << t << ": " << cli_.output("w" + std::to_string(t));
        if (t == 1012) {
            EXPECT_EQ(status, 0) << "the highest token is never refused";
        }
    }
    EXPECT_EQ(read_file(file), fence::value_of(1012));
    EXPECT_EQ(record(file), "1012\n");
}

} // namespace
} // namespace zklock::test::cli
