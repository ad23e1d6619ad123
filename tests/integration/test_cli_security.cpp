// The zklock tool against neighbours and hostile input: credentials and ACLs,
// exit statuses that say what went wrong, output that survives any bytes,
// what CMD inherits, and signals from a terminal. Real servers, real processes.
#include "test_cli_support.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/testing/faults.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

using namespace zklock;
using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

constexpr const char* alice_secret = "alice-pw-7f3a9c";
constexpr const char* bob_secret = "bob-pw-51d2e8";

// Writes `content` to `path` with `mode` (set after writing, whatever the umask).
void write_file(const std::filesystem::path& path, const std::string& content, mode_t mode) {
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << content;
    }
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

class CliSecurityTest : public CliTest {
protected:
    // alice's runs make lock directories and their parents with her ACL: each
    // test has a root of its own, so the next one (sharing the server) is not
    // shut out.
    std::string path_root() const override {
        return std::string("/zklock-tests-") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    }

    void SetUp() override {
        CliTest::SetUp();
        write_file(alice_file(), std::string("# alice\ndigest:alice:") + alice_secret + "\n", 0600);
        write_file(bob_file(), std::string("digest:bob:") + bob_secret + "\n", 0600);
    }

    void TearDown() override {
        // Paths only alice may read: the base class's unauthenticated check cannot.
        if (server_ && server_->running() && !alice_paths_.empty()) {
            auto s = connect_as({{"digest", std::string("alice:") + alice_secret}});
            for (const auto& p : alice_paths_) {
                std::vector<contender> left;
                std::error_code ec;
                EXPECT_TRUE(wait_until([&] {
                    left = list_contenders(*s, p, ec);
                    return !ec && left.empty();
                })) << left.size() << " lock node(s) left under " << p << " (" << ec.message() << ")";
            }
        }
        // No output of any run holds a secret.
        for (const auto& entry : std::filesystem::directory_iterator(cli_.dir())) {
            if (entry.path().extension() != ".out") continue;
            const auto text = read_file(entry.path());
            EXPECT_FALSE(contains(text, alice_secret)) << entry.path() << ":\n" << text;
            EXPECT_FALSE(contains(text, bob_secret)) << entry.path() << ":\n" << text;
        }
        CliTest::TearDown();
    }

    std::filesystem::path alice_file() const { return cli_.file("alice.auth"); }
    std::filesystem::path bob_file() const { return cli_.file("bob.auth"); }

    /// A lock path protected by alice's ACL; checked for leftovers with her credentials.
    std::string alice_path(const std::string& name = "lock") {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        auto p = path_root() + "/" + info->name() + "/" + name;
        alice_paths_.push_back(p);
        return p;
    }

    std::unique_ptr<Session> connect_as(std::vector<auth_entry> auth) {
        auto o = options();
        o.auth = std::move(auth);
        auto s = std::make_unique<Session>(o);
        s->connect();
        return s;
    }

    std::vector<std::string> zk(std::vector<std::string> args) {
        args.insert(args.begin() + 1, {"-c", server_->connect_string()});
        return args;
    }

    /// alice holds `path` with `acl` through `zklock run` until stopped; returns once she does.
    ChildProcess alice_holds(const std::string& path, const std::string& acl, const std::string& name = "alice") {
        const auto held = cli_.file(name + ".held");
        auto p = cli_.start(zk({"run", "--auth-file", alice_file().string(), "--acl", acl, path, "--", "sh", "-c",
                                "echo \"$ZKLOCK_LOCK_NODE\" > \"$0\"; exec sleep 1000", held.string()}),
                            name);
        wait_for_line(held);
        return p;
    }

    /// A persistent node at `path` (and its parents), as a careless tool or a forger leaves one.
    void create_persistent_node(const std::string& path) {
        auto s = connect();
        for (auto slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
            zklock::testing::create_node(*s, path.substr(0, slash));
        zklock::testing::create_node(*s, path, "forged");
        const auto queue = list_contenders(*s, path.substr(0, path.rfind('/')));
        ASSERT_EQ(queue.size(), 1u);
        ASSERT_TRUE(queue[0].persistent);
    }

    std::vector<std::string> alice_paths_;
};

// --- credentials and ACLs ----------------------------------------------------------

TEST_F(CliSecurityTest, CreatorAclShutsOutOtherIdentitiesAtOnceWith77NamingIdentityAndPath) {
    const auto path = alice_path();
    auto alice = alice_holds(path, "auth::cdrwa");
    const auto marker = cli_.file("ran");

    // No -w: a refusal that waited for a timeout would never exit (exit_code's deadline catches it).
    auto bob = cli_.start(zk({"run", "--auth-file", bob_file().string(), path, "--", "touch", marker.string()}), "bob");
    EXPECT_EQ(exit_code(bob), 77) << cli_.output("bob");
    EXPECT_TRUE(contains(cli_.output("bob"), "digest:bob may not create")) << cli_.output("bob");
    EXPECT_TRUE(contains(cli_.output("bob"), path)) << cli_.output("bob");

    auto anyone = cli_.start(zk({"run", path, "--", "touch", marker.string()}), "anyone");
    EXPECT_EQ(exit_code(anyone), 77) << cli_.output("anyone");
    EXPECT_TRUE(contains(cli_.output("anyone"), "anyone (no authentication)")) << cli_.output("anyone");
    EXPECT_TRUE(contains(cli_.output("anyone"), path)) << cli_.output("anyone");

    // $ZKLOCK_AUTH_FILE names the identity as --auth-file does.
    auto bob_env = cli_.start(zk({"run", path, "--", "touch", marker.string()}), "bob-env",
                              {{"ZKLOCK_AUTH_FILE", bob_file().string()}});
    EXPECT_EQ(exit_code(bob_env), 77) << cli_.output("bob-env");
    EXPECT_TRUE(contains(cli_.output("bob-env"), "digest:bob")) << cli_.output("bob-env");

    EXPECT_FALSE(std::filesystem::exists(marker));
    ASSERT_EQ(::kill(alice.pid(), SIGTERM), 0);
    EXPECT_EQ(exit_code(alice), 143) << cli_.output("alice");
}

TEST_F(CliSecurityTest, ElectionWithCreatorAclShutsOutOtherIdentitiesWith77) {
    const auto path = alice_path("election");
    const auto led = cli_.file("led");
    auto alice = cli_.start(zk({"elect", "--auth-file", alice_file().string(), "--acl", "auth::cdrwa", path, "alice",
                                "--", "sh", "-c", "echo led > \"$0\"; exec sleep 1000", led.string()}),
                            "alice");
    wait_for_line(led);

    auto bob = cli_.start(zk({"elect", "--auth-file", bob_file().string(), path, "bob", "--", "true"}), "bob");
    EXPECT_EQ(exit_code(bob), 77) << cli_.output("bob");
    EXPECT_TRUE(contains(cli_.output("bob"), "digest:bob")) << cli_.output("bob");
    EXPECT_TRUE(contains(cli_.output("bob"), path)) << cli_.output("bob");

    auto observer = cli_.start(zk({"elect", "--observe", path}), "observer");
    EXPECT_EQ(exit_code(observer), 77) << cli_.output("observer");
    EXPECT_TRUE(contains(cli_.output("observer"), "anyone (no authentication)")) << cli_.output("observer");
    EXPECT_TRUE(contains(cli_.output("observer"), path)) << cli_.output("observer");

    ASSERT_EQ(::kill(alice.pid(), SIGTERM), 0);
    EXPECT_EQ(exit_code(alice), 143) << cli_.output("alice");
}

TEST_F(CliSecurityTest, WorldReadLetsAnUnauthenticatedStatusListTheQueueCreatorAllAloneDoesNot) {
    const auto readable = alice_path("readable");
    auto alice = alice_holds(readable, "auth::cdrwa,world:anyone:r", "alice");
    const auto node = node_name(wait_for_line(cli_.file("alice.held")));
    auto status = cli_.start(zk({"status", "-o", "wide", readable}), "status");
    EXPECT_EQ(exit_code(status), 0) << cli_.output("status");
    EXPECT_TRUE(contains(cli_.output("status"), node)) << cli_.output("status");

    const auto closed = alice_path("closed");
    auto alice2 = alice_holds(closed, "auth::cdrwa", "alice2");
    auto refused = cli_.start(zk({"status", closed}), "refused");
    EXPECT_EQ(exit_code(refused), 77) << cli_.output("refused");
    EXPECT_TRUE(contains(cli_.output("refused"), "anyone (no authentication)")) << cli_.output("refused");
    EXPECT_TRUE(contains(cli_.output("refused"), closed)) << cli_.output("refused");
    auto own = cli_.start(zk({"status", "--json", "--auth-file", alice_file().string(), closed}), "own");
    EXPECT_EQ(exit_code(own), 0) << cli_.output("own");
    EXPECT_TRUE(contains(cli_.output("own"), node_name(wait_for_line(cli_.file("alice2.held"))))) << cli_.output("own");

    ASSERT_EQ(::kill(alice.pid(), SIGTERM), 0);
    ASSERT_EQ(::kill(alice2.pid(), SIGTERM), 0);
    EXPECT_EQ(exit_code(alice), 143) << cli_.output("alice");
    EXPECT_EQ(exit_code(alice2), 143) << cli_.output("alice2");
}

TEST_F(CliSecurityTest, AnOpenDirectoryIsReportedWith77InsteadOfBeingUsedAsIfProtected) {
    const auto path = lock_path();
    auto s = connect();
    Mutex open(*s, path);  // creates the directory with the open ACL
    open.lock();
    const auto marker = cli_.file("ran");
    auto p = cli_.start(zk({"run", "--auth-file", alice_file().string(), "--acl", "auth::cdrwa", path, "--", "touch",
                            marker.string()}));
    EXPECT_EQ(exit_code(p), 77) << cli_.output();
    EXPECT_TRUE(contains(cli_.output(), "world:anyone")) << cli_.output();
    EXPECT_TRUE(contains(cli_.output(), path)) << cli_.output();
    EXPECT_FALSE(std::filesystem::exists(marker));
    open.unlock();
}

TEST_F(CliSecurityTest, ASchemeTheServerRefusesExits77AtOnce) {
    const auto file = cli_.file("odd.auth");
    write_file(file, "nosuchscheme:opaque-credential-42\n", 0600);
    const auto marker = cli_.file("ran");
    auto p = cli_.start(zk({"run", "--auth-file", file.string(), lock_path(), "--", "touch", marker.string()}));
    EXPECT_EQ(exit_code(p), 77) << cli_.output();
    EXPECT_TRUE(contains(cli_.output(), "refused the authentication as nosuchscheme")) << cli_.output();
    EXPECT_FALSE(contains(cli_.output(), "opaque-credential-42")) << cli_.output();
    EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(CliSecurityTest, TheCommandDoesNotSeeTheAuthFileVariable) {
    const auto path = alice_path();
    const auto env = cli_.file("env");
    // --acl auth::cdrwa is refused without credentials: the run proves zklock read the variable.
    auto p = cli_.start(zk({"run", "--acl", "auth::cdrwa", path, "--", "sh", "-c", "env > \"$0\"", env.string()}), "cli",
                        {{"ZKLOCK_AUTH_FILE", alice_file().string()}});
    EXPECT_EQ(exit_code(p), 0) << cli_.output();
    const auto text = read_file(env);
    EXPECT_TRUE(contains(text, "ZKLOCK_LOCK_NODE=" + path + "/")) << text;
    EXPECT_FALSE(contains(text, "ZKLOCK_AUTH_FILE")) << text;
    EXPECT_FALSE(contains(text, alice_secret)) << text;

    const auto elect_env = cli_.file("elect-env");
    auto e = cli_.start(zk({"elect", "--once", "--acl", "auth::cdrwa", alice_path("election"), "--", "sh", "-c",
                            "env > \"$0\"", elect_env.string()}),
                        "elect", {{"ZKLOCK_AUTH_FILE", alice_file().string()}});
    EXPECT_EQ(exit_code(e), 0) << cli_.output("elect");
    EXPECT_TRUE(contains(read_file(elect_env), "ZKLOCK_LEADER_EPOCH=")) << read_file(elect_env);
    EXPECT_FALSE(contains(read_file(elect_env), "ZKLOCK_AUTH_FILE")) << read_file(elect_env);
}

TEST(CliSecurityUsageTest, AnAuthFileOthersMayReadIsRefusedWith64NamingTheFileButNoSecret) {
    Cli cli;
    const auto file = cli.file("shared.auth");
    const auto marker = cli.file("ran");
    for (const mode_t mode : {0644, 0640, 0604}) {
        write_file(file, std::string("digest:alice:") + alice_secret + "\n", mode);
        // Refused before any connection attempt (nothing listens on port 1).
        const std::vector<std::vector<std::string>> runs{
            {"run", "-c", "127.0.0.1:1", "--auth-file", file.string(), "/x", "--", "touch", marker.string()},
            {"elect", "-c", "127.0.0.1:1", "--auth-file", file.string(), "/x", "--", "touch", marker.string()},
            {"elect", "-c", "127.0.0.1:1", "--observe", "--auth-file", file.string(), "/x"},
            {"status", "-c", "127.0.0.1:1", "--auth-file", file.string(), "/x"},
            {"status", "-c", "127.0.0.1:1", "/x"},  // through $ZKLOCK_AUTH_FILE
        };
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const auto name = "m" + std::to_string(mode) + "-" + std::to_string(i);
            auto p = cli.start(runs[i], name, {{"ZKLOCK_AUTH_FILE", file.string()}});
            EXPECT_EQ(exit_code(p), 64) << cli.output(name);
            const auto out = cli.output(name);
            EXPECT_TRUE(contains(out, file.string())) << out;
            EXPECT_TRUE(contains(out, "chmod 600")) << out;
            EXPECT_FALSE(contains(out, alice_secret)) << out;
        }
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(CliSecurityUsageTest, BadAclsAndWaitsExit64BeforeConnecting) {
    Cli cli;
    const auto marker = cli.file("ran");
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"run", "-c", "127.0.0.1:1", "--acl", "auth::cdrwa", "/x", "--", "touch", marker.string()}, "auth"},
        {{"run", "-c", "127.0.0.1:1", "--acl", "bogus", "/x", "--", "touch", marker.string()}, "--acl"},
        {{"run", "-c", "127.0.0.1:1", "-w", "1.5", "/x", "--", "touch", marker.string()}, "unit"},
        {{"run", "-c", "127.0.0.1:1", "-w", "-1", "/x", "--", "touch", marker.string()}, "not a duration"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto name = "case" + std::to_string(i);
        auto p = cli.start(cases[i].first, name);
        EXPECT_EQ(exit_code(p), 64) << cli.output(name);
        EXPECT_TRUE(contains(cli.output(name), cases[i].second)) << cli.output(name);
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(CliSecurityTest, AMissingChrootExits78NamingIt) {
    const auto chroot = "/no-such-chroot";
    const auto connect_to = server_->connect_string() + chroot;
    const auto marker = cli_.file("ran");
    auto run = cli_.start({"run", "-c", connect_to, "/x", "--", "touch", marker.string()}, "run");
    EXPECT_EQ(exit_code(run), 78) << cli_.output("run");
    EXPECT_TRUE(contains(cli_.output("run"), std::string("chroot ") + chroot)) << cli_.output("run");
    auto elect = cli_.start({"elect", "-c", connect_to, "/e", "id", "--", "touch", marker.string()}, "elect");
    EXPECT_EQ(exit_code(elect), 78) << cli_.output("elect");
    EXPECT_TRUE(contains(cli_.output("elect"), std::string("chroot ") + chroot)) << cli_.output("elect");
    EXPECT_FALSE(std::filesystem::exists(marker));
    // status does not report an empty queue where there is no chroot at all.
    auto status = cli_.start({"status", "-c", connect_to, "/x"}, "status");
    EXPECT_EQ(exit_code(status), 78) << cli_.output("status");
    EXPECT_TRUE(contains(cli_.output("status"), std::string("chroot ") + chroot)) << cli_.output("status");
}

// --- what the command inherits --------------------------------------------------------

TEST_F(CliSecurityTest, TheCommandGetsStdioAndTheDescriptorsZklockInheritedNothingElse) {
    const auto path = lock_path();
    const auto listing = cli_.file("fds");
    // The shell gives zklock descriptor 7. CMD's shell has its descriptors listed
    // by ls, a child of it (so ls's own are not in the list). Its stdout goes to
    // the file with `exec`, which keeps no copy (a redirection of ls itself
    // would: sh saves the old stdout on a descriptor of its own meanwhile), and
    // `exit` after ls keeps sh from exec'ing ls in its place.
    auto p = cli_.start_via({"sh", "-c", "exec 7</dev/null; exec \"$@\"", "sh"},
                            zk({"run", "--auth-file", alice_file().string(), path, "--", "sh", "-c",
                                "exec 1>\"$0\"; ls /proc/$$/fd; exit 0", listing.string()}));
    EXPECT_EQ(exit_code(p), 0) << cli_.output();
    std::set<std::string> fds;
    std::istringstream in(read_file(listing));
    for (std::string fd; in >> fd;) fds.insert(fd);
    EXPECT_EQ(fds, (std::set<std::string>{"0", "1", "2", "7"})) << read_file(listing);
}

// --- signals from a terminal ----------------------------------------------------------

// zklock in its own session with a pseudo-terminal as its controlling terminal
// (stdin, stdout, stderr), as when a user runs it in a terminal: the terminal's
// foreground process group is zklock's, which CMD shares.
class TerminalSession {
public:
    explicit TerminalSession(std::vector<std::string> args) {
        master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) throw std::runtime_error("posix_openpt");
        const std::string slave = ::ptsname(master_);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork");
        if (pid_ == 0) {
            // Async-signal-safe calls only: the test process has threads.
            if (::setsid() < 0) ::_exit(120);
            const int fd = ::open(slave.c_str(), O_RDWR);  // the first terminal a session leader opens
            if (fd < 0 || ::ioctl(fd, TIOCSCTTY, 0) != 0) ::_exit(121);
            if (::dup2(fd, 0) < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0) ::_exit(122);
            ::syscall(SYS_close_range, 3u, ~0u, 0);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        reader_ = std::thread([this] { drain(); });
    }
    ~TerminalSession() {
        ::kill(-pid_, SIGKILL);  // the whole group: zklock, CMD and whatever CMD started
        if (!status_) {
            int st = 0;
            ::waitpid(pid_, &st, 0);
        }
        stop_ = true;
        reader_.join();
        ::close(master_);
    }
    pid_t pid() const { return pid_; }
    /// What the user types.
    void type(const std::string& keys) { ASSERT_EQ(::write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size())); }
    /// SIGSTOP, returning once every thread of zklock has stopped.
    void pause() {
        ASSERT_EQ(::kill(pid_, SIGSTOP), 0);
        int st = 0;
        ASSERT_EQ(::waitpid(pid_, &st, WUNTRACED), pid_);
        ASSERT_TRUE(WIFSTOPPED(st));
    }
    void resume() { ASSERT_EQ(::kill(pid_, SIGCONT), 0); }
    /// The exit status (or -N for signal N); -1000 when zklock did not exit in time.
    int exit_code(milliseconds timeout = 30s) {
        wait_until([&] {
            int st = 0;
            if (!status_ && ::waitpid(pid_, &st, WNOHANG) == pid_ && (WIFEXITED(st) || WIFSIGNALED(st))) status_ = st;
            return status_.has_value();
        }, timeout);
        if (!status_) return -1000;
        return WIFEXITED(*status_) ? WEXITSTATUS(*status_) : -WTERMSIG(*status_);
    }
    std::string output() {
        std::lock_guard lk(m_);
        return output_;
    }

private:
    // The terminal's output (zklock's notices), kept for failure messages; read
    // so that nothing blocks on a full terminal.
    void drain() {
        char buf[4096];
        while (!stop_) {
            pollfd p{master_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;  // allowed: the polling interval of the stop flag
            const auto n = ::read(master_, buf, sizeof buf);
            if (n <= 0) {
                if (n < 0 && errno == EINTR) continue;
                return;  // EIO: no process holds the terminal any more
            }
            std::lock_guard lk(m_);
            output_.append(buf, static_cast<std::size_t>(n));
        }
    }

    int master_ = -1;
    pid_t pid_ = -1;
    std::optional<int> status_;
    std::thread reader_;
    std::atomic<bool> stop_{false};
    std::mutex m_;
    std::string output_;
};

// CMD: writes "ready", then a line per SIGINT it gets; on SIGTERM writes "TERM"
// and exits. Its sleep runs in the background, where a non-interactive shell
// ignores SIGINT, so only the shell's trap counts the terminal's ^C.
std::vector<std::string> counting_command(const std::filesystem::path& log) {
    return {"sh", "-c",
            "trap 'echo INT >> \"$0\"' INT; trap 'kill $s; echo TERM >> \"$0\"; exit 0' TERM; "
            "sleep 1000 & s=$!; echo ready >> \"$0\"; while kill -0 $s 2>/dev/null; do wait $s; done",
            log.string()};
}

std::size_t count_of(const std::vector<std::string>& lines, const std::string& what) {
    return static_cast<std::size_t>(std::count(lines.begin(), lines.end(), what));
}

TEST_F(CliSecurityTest, CtrlCInATerminalReachesTheCommandOnceAndStopsZklock) {
    const auto log = cli_.file("signals");
    std::vector<std::string> args{ZKLOCK_CLI_PATH, "run", "-c", server_->connect_string(), "--grace", "600000",
                                  lock_path(), "--"};
    for (auto& w : counting_command(log)) args.push_back(w);
    TerminalSession term(args);
    ASSERT_TRUE(wait_until([&] { return count_of(complete_lines(log), "ready") == 1; }, 30s)) << term.output();

    // zklock is held still while the terminal's SIGINT reaches CMD, so that a
    // forwarded copy could not merge with the terminal's (one pending SIGINT).
    term.pause();
    term.type("\x03");  // ^C
    ASSERT_TRUE(wait_until([&] { return count_of(complete_lines(log), "INT") == 1; })) << term.output();
    term.resume();
    // SIGTERM to zklock alone is forwarded after the SIGINT it has pending: CMD
    // logs TERM after every SIGINT zklock might have sent, then exits.
    ASSERT_EQ(::kill(term.pid(), SIGTERM), 0);
    EXPECT_EQ(term.exit_code(), 130) << "the ^C is zklock's stop request too\n" << term.output();
    EXPECT_EQ(complete_lines(log), (std::vector<std::string>{"ready", "INT", "TERM"})) << term.output();
}

TEST_F(CliSecurityTest, KillIntToZklockAloneReachesTheCommandOnce) {
    const auto log = cli_.file("signals");
    auto p = cli_.start(plus(run_args(lock_path(), {"--grace", "600000"}), counting_command(log)));
    ASSERT_TRUE(wait_until([&] { return count_of(complete_lines(log), "ready") == 1; }, 30s)) << cli_.output();
    ASSERT_EQ(::kill(p.pid(), SIGINT), 0);  // kill(1) to zklock alone: SI_USER
    ASSERT_TRUE(wait_until([&] { return count_of(complete_lines(log), "INT") == 1; })) << cli_.output();
    ASSERT_EQ(::kill(p.pid(), SIGTERM), 0);
    EXPECT_EQ(exit_code(p), 130) << cli_.output();
    EXPECT_EQ(complete_lines(log), (std::vector<std::string>{"ready", "INT", "TERM"})) << cli_.output();
}

// --- arguments ------------------------------------------------------------------------

TEST_F(CliSecurityTest, WaitZeroDoesNotWaitAndWaitsTakeUnits) {
    const auto path = lock_path();
    auto s = connect();
    Mutex held(*s, path);
    held.lock();
    const auto marker = cli_.file("ran");
    auto zero = cli_.start(plus(run_args(path, {"-w", "0"}), {"touch", marker.string()}), "zero");
    EXPECT_EQ(exit_code(zero), 75) << cli_.output("zero");
    EXPECT_TRUE(contains(cli_.output("zero"), "held by someone else")) << cli_.output("zero");
    auto unit = cli_.start(plus(run_args(path, {"-w", "0.3s"}), {"touch", marker.string()}), "unit");
    EXPECT_EQ(exit_code(unit), 75) << cli_.output("unit");
    EXPECT_TRUE(contains(cli_.output("unit"), "not acquired within 300 ms")) << cli_.output("unit");
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_EQ(queue_length(path), 1u);
    held.unlock();

    // Free: -w 0 takes it.
    auto free = cli_.start(plus(run_args(lock_path("free"), {"-w", "0"}), {"touch", marker.string()}), "free");
    EXPECT_EQ(exit_code(free), 0) << cli_.output("free");
    EXPECT_TRUE(std::filesystem::exists(marker));
}

TEST_F(CliSecurityTest, ElectWithoutAnIdCampaignsAsHostnameAndPid) {
    const auto path = lock_path("election");
    const auto led = cli_.file("led");
    auto p = cli_.start(zk({"elect", path, "--", "sh", "-c", "echo led > \"$0\"; exec sleep 1000", led.string()}));
    wait_for_line(led);
    auto s = connect();
    LeaderElection observer(*s, path, "");
    const auto leader = observer.leader();
    ASSERT_TRUE(leader.has_value());
    char host[256] = {};
    ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
    EXPECT_EQ(leader->participant_id, std::string(host) + ":" + std::to_string(p.pid()));
    ASSERT_EQ(::kill(p.pid(), SIGTERM), 0);
    EXPECT_EQ(exit_code(p), 143) << cli_.output();
}

TEST_F(CliSecurityTest, AnOptionAfterTheLockPathGetsAHintAnOptionLikeCommandAfterSeparatorRuns) {
    const auto path = lock_path();
    const auto marker = cli_.file("ran");
    auto run = cli_.start({"run", "-c", server_->connect_string(), path, "-n", "--", "touch", marker.string()}, "run");
    EXPECT_EQ(exit_code(run), 64) << cli_.output("run");
    EXPECT_TRUE(contains(cli_.output("run"), "options go before LOCK_PATH: zklock run -n " + path + " -- touch " +
                                                 marker.string()))
        << cli_.output("run");
    auto elect = cli_.start({"elect", "-c", server_->connect_string(), path, "--once", "--", "touch", marker.string()},
                            "elect");
    EXPECT_EQ(exit_code(elect), 64) << cli_.output("elect");
    EXPECT_TRUE(contains(cli_.output("elect"), "options go before ELECTION_PATH: zklock elect --once " + path))
        << cli_.output("elect");
    EXPECT_FALSE(std::filesystem::exists(marker));

    // A command named like an option, after --, is run.
    const auto bin = cli_.file("bin");
    std::filesystem::create_directory(bin);
    write_file(bin / "-weird", "#!/bin/sh\ntouch \"$1\"\n", 0755);
    auto weird = cli_.start(plus(run_args(path), {"-weird", marker.string()}), "weird",
                            {{"PATH", bin.string() + ":" + std::getenv("PATH")}});
    EXPECT_EQ(exit_code(weird), 0) << cli_.output("weird");
    EXPECT_TRUE(std::filesystem::exists(marker));
}

// --- hostile bytes -------------------------------------------------------------------

TEST_F(CliSecurityTest, OutputEscapesControlCharactersAndJsonSurvivesInvalidUtf8) {
    const std::string hostile = "\x1b[2J\x1b]0;owned\x07\xff\xfe end";
    const std::string shown = "\\x1b[2J\\x1b]0;owned\\x07\\xff\\xfe end";
    const auto path = lock_path();
    auto s = connect();
    MutexOptions mo;
    mo.node_data = hostile;
    Mutex held(*s, path, mo);
    held.lock();

    auto text = cli_.start(zk({"status", "-o", "wide", path}), "text");  // wide: the owner whole
    EXPECT_EQ(exit_code(text), 0) << cli_.output("text");
    EXPECT_TRUE(contains(cli_.output("text"), shown)) << cli_.output("text");
    EXPECT_FALSE(contains(cli_.output("text"), "\x1b")) << cli_.output("text");

    auto json = cli_.start(zk({"status", "--json", path}), "json");
    EXPECT_EQ(exit_code(json), 0) << cli_.output("json");
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(cli_.output("json"))) << cli_.output("json");
    EXPECT_EQ(doc.at("contenders").at(0).at("data"), "\x1b[2J\x1b]0;owned\x07\xef\xbf\xbd\xef\xbf\xbd end");
    held.unlock();

    // An election id is any bytes too.
    const auto election_path = lock_path("election");
    LeaderElection election(*s, election_path, hostile);
    election.campaign();
    auto observe = cli_.start(zk({"elect", "--observe", election_path}), "observe");
    auto observe_json = cli_.start(zk({"elect", "--observe", "--json", election_path}), "observe-json");
    ASSERT_TRUE(wait_until([&] { return !complete_lines(cli_.output_path("observe")).empty(); }, 30s))
        << cli_.output("observe");
    ASSERT_TRUE(wait_until([&] { return !complete_lines(cli_.output_path("observe-json")).empty(); }, 30s))
        << cli_.output("observe-json");
    const auto line = complete_lines(cli_.output_path("observe")).at(0);
    EXPECT_EQ(line.rfind("leader " + shown + " epoch ", 0), 0u) << line;
    nlohmann::json leader;
    ASSERT_NO_THROW(leader = nlohmann::json::parse(complete_lines(cli_.output_path("observe-json")).at(0)));
    EXPECT_EQ(leader.at("leader"), "\x1b[2J\x1b]0;owned\x07\xef\xbf\xbd\xef\xbf\xbd end");
    ASSERT_TRUE(observe.signal(SIGTERM));
    ASSERT_TRUE(observe_json.signal(SIGTERM));
    EXPECT_EQ(exit_code(observe), 0) << cli_.output("observe");
    EXPECT_EQ(exit_code(observe_json), 0) << cli_.output("observe-json");
    election.resign();

    // Notices quote what they were given escaped too.
    auto notice = cli_.start(plus(run_args(lock_path("notice")), {"\x1b[2Jzklock-no-such-command"}), "notice");
    EXPECT_EQ(exit_code(notice), 127) << cli_.output("notice");
    EXPECT_TRUE(contains(cli_.output("notice"), "\\x1b[2Jzklock-no-such-command")) << cli_.output("notice");
    EXPECT_FALSE(contains(cli_.output("notice"), "\x1b")) << cli_.output("notice");
}

TEST_F(CliSecurityTest, APersistentNodeIsMarkedAndBlocksRunWith75SayingHowToRemoveIt) {
    const auto path = lock_path();
    auto s = connect();
    const auto forged = path + "/_c_00000000-0000-0000-0000-000000000000-lock-0000000000";
    create_persistent_node(forged);

    auto text = cli_.start(zk({"status", path}), "text");
    EXPECT_EQ(exit_code(text), 0) << cli_.output("text");
    const auto out = cli_.output("text");
    EXPECT_TRUE(contains(out, "persistent")) << out;
    EXPECT_FALSE(contains(out, "0x0 ")) << out;
    EXPECT_TRUE(contains(out, "delete " + forged)) << out;

    auto json = cli_.start(zk({"status", "--json", path}), "json");
    EXPECT_EQ(exit_code(json), 0) << cli_.output("json");
    const auto doc_text = cli_.output("json");
    const auto doc = nlohmann::json::parse(doc_text.substr(0, doc_text.rfind('}') + 1));
    EXPECT_EQ(doc.at("contenders").at(0).at("persistent"), true) << doc.dump();

    const auto marker = cli_.file("ran");
    auto run = cli_.start(plus(run_args(path), {"touch", marker.string()}), "run");
    EXPECT_EQ(exit_code(run), 75) << cli_.output("run");
    EXPECT_TRUE(contains(cli_.output("run"), "persistent")) << cli_.output("run");
    EXPECT_TRUE(contains(cli_.output("run"), "delete " + forged)) << cli_.output("run");
    EXPECT_FALSE(std::filesystem::exists(marker));
    zklock::testing::delete_node(*s, forged);
}

} // namespace
