// zklock run: hold a lock while a command runs (flock(1), `etcdctl lock`, `consul lock`).
#include "commands.hpp"

#include <zklock/detail/path.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace zklock::cli {
namespace {
namespace asio = boost::asio;
using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;

struct run_options {
    std::string connect;
    int session_timeout_ms = 10000;
    std::optional<int> wait_ms;  // -w: give up after this long
    bool no_wait = false;        // -n
    int grace_ms = 5000;
    bool verbose = false;
    std::string path;
    std::vector<std::string> command;
};

constexpr milliseconds default_connect_timeout{15000};
// How long the release may take to commit before zklock exits anyway; closing the
// session on exit deletes the node all the same.
constexpr milliseconds release_timeout{3000};

long long elapsed_ms(clock_type::time_point since) {
    return std::chrono::duration_cast<milliseconds>(clock_type::now() - since).count();
}

std::string describe_status(int status) {
    if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("killed by signal ") + ::strsignal(WTERMSIG(status));
    return "status " + std::to_string(status);
}

int shell_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

// The stop signals zklock handles: those not ignored on entry. Under nohup, or
// as a background job of a non-interactive shell, they stay ignored, for zklock
// and (inherited through exec) for CMD.
std::vector<int> stop_signals() {
    std::vector<int> out;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction current {};
        if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        out.push_back(sig);
    }
    return out;
}

struct spawn_result {
    pid_t pid = -1;
    int error = 0;  // errno of the failed exec
};

// fork + exec rather than posix_spawn: the child must ask for PR_SET_PDEATHSIG.
// The lock dies with zklock's session, so a command that outlived zklock (kill -9)
// would run unprotected; the kernel kills it instead.
spawn_result spawn_command(const std::vector<std::string>& command,
                           const std::vector<std::pair<std::string, std::string>>& extra_env,
                           const std::vector<int>& handled_signals) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        const auto key = entry.substr(0, entry.find('='));
        const bool replaced =
            std::any_of(extra_env.begin(), extra_env.end(), [&](const auto& kv) { return kv.first == key; });
        if (!replaced) env.emplace_back(entry);
    }
    for (const auto& [k, v] : extra_env) env.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = command;
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);

    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) return {-1, errno};
    // Signals stay blocked across fork: the child must not run zklock's handlers
    // (they would write to the parent's signal pipe) before it resets them.
    sigset_t all;
    sigset_t old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int sig : handled_signals) ::sigaction(sig, &dfl, nullptr);
        sigset_t none;
        ::sigemptyset(&none);
        ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
        ::execvpe(argv[0], argv.data(), envp.data());
        const int err = errno;
        [[maybe_unused]] auto n = ::write(report[1], &err, sizeof err);
        ::_exit(127);
    }
    const int fork_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::close(report[1]);
    if (pid < 0) {
        ::close(report[0]);
        return {-1, fork_errno};
    }
    int err = 0;
    ssize_t n;
    do {
        n = ::read(report[0], &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    ::close(report[0]);
    if (n == static_cast<ssize_t>(sizeof err)) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return {-1, err};
    }
    return {pid, 0};
}

// One `zklock run`: everything happens on io_ in the main thread; the Session
// runs its own thread and posts completions here.
class runner {
public:
    explicit runner(run_options o)
        : o_(std::move(o)),
          handled_signals_(stop_signals()),
          signals_(io_),
          session_(session_options(o_)),
          mutex_(session_, o_.path),
          kill_timer_(io_),
          release_timer_(io_),
          child_wait_(io_) {}

    int run() {
        for (int sig : handled_signals_) signals_.add(sig);
        wait_for_signal();
        started_ = clock_type::now();
        if (o_.verbose) say("connecting to " + o_.connect);
        session_.async_connect(asio::bind_cancellation_slot(
            cancel_.slot(), asio::bind_executor(io_, [this](std::error_code ec) { on_connected(ec); })));
        io_.run();
        return exit_code_;
    }

private:
    enum class phase { connecting, acquiring, running, releasing, done };

    static SessionOptions session_options(const run_options& o) {
        SessionOptions s;
        s.connect = o.connect;
        s.session_timeout = milliseconds(o.session_timeout_ms);
        s.connect_timeout = o.wait_ms ? milliseconds(*o.wait_ms) : default_connect_timeout;
        return s;
    }

    void say(const std::string& what) const { std::cerr << "zklock: " << what << std::endl; }

    void wait_for_signal() {
        signals_.async_wait([this](boost::system::error_code ec, int sig) {
            if (ec) return;
            on_signal(sig);
            wait_for_signal();
        });
    }

    void on_signal(int sig) {
        switch (phase_) {
        case phase::connecting:
        case phase::acquiring:
            // The pending operation completes with operation_canceled (the acquire
            // deletes its node first), and that handler exits.
            stop_signal_ = sig;
            cancel_.emit(asio::cancellation_type::terminal);
            break;
        case phase::running:
            if (!stop_signal_) stop_signal_ = sig;
            stop_child(sig);
            break;
        case phase::releasing:
        case phase::done:
            break;
        }
    }

    void on_connected(std::error_code ec) {
        if (ec) {
            if (ec == std::errc::operation_canceled) return finish(128 + stop_signal_);
            if (ec == errc::timeout) {
                say("could not connect to " + o_.connect + " within " +
                    std::to_string(session_.options().connect_timeout.count()) + " ms");
            } else if (ec == errc::invalid_argument) {
                say("invalid connect string '" + o_.connect + "'");
                return finish(exit_usage);
            } else {
                say("could not connect to " + o_.connect + ": " + ec.message());
            }
            return finish(exit_unavailable);
        }
        phase_ = phase::acquiring;
        if (o_.verbose) say("waiting for lock " + o_.path);
        wait_started_ = clock_type::now();
        if (o_.no_wait) {
            mutex_.async_try_lock(asio::bind_cancellation_slot(
                cancel_.slot(), asio::bind_executor(io_, [this](std::error_code e, bool ok) { on_acquired(e, ok); })));
            return;
        }
        if (o_.wait_ms) {
            // -w bounds the connect and the wait together.
            const auto left = milliseconds(*o_.wait_ms) - milliseconds(elapsed_ms(started_));
            mutex_.async_try_lock_for(
                std::max(left, milliseconds(1)),
                asio::bind_cancellation_slot(cancel_.slot(), asio::bind_executor(io_, [this](std::error_code e, bool ok) {
                                                 on_acquired(e, ok);
                                             })));
            return;
        }
        mutex_.async_lock(asio::bind_cancellation_slot(
            cancel_.slot(), asio::bind_executor(io_, [this](std::error_code e) { on_acquired(e, !e); })));
    }

    void on_acquired(std::error_code ec, bool acquired) {
        if (ec == std::errc::operation_canceled || (stop_signal_ && !acquired)) return finish(128 + stop_signal_);
        if (ec) {
            say("could not acquire lock " + o_.path + ": " + ec.message());
            return finish(exit_unavailable);
        }
        if (!acquired) {
            if (o_.no_wait) say("lock " + o_.path + " is held by someone else");
            else say("lock " + o_.path + " not acquired within " + std::to_string(*o_.wait_ms) + " ms");
            return finish(exit_not_acquired);
        }
        if (stop_signal_) return release(128 + stop_signal_);  // signalled as the grant arrived
        node_ = mutex_.node_path();
        token_ = mutex_.fencing_token();
        if (o_.verbose)
            say("acquired " + o_.path + " (node " + node_ + ", fencing token " + std::to_string(token_) + ") after " +
                std::to_string(elapsed_ms(wait_started_)) + " ms");
        phase_ = phase::running;
        mutex_.async_wait_lost(asio::bind_executor(io_, [this](std::error_code e) { on_lost(e); }));
        start_command();
    }

    void start_command() {
        const auto r = spawn_command(o_.command, {{"ZKLOCK_LOCK_NODE", node_},
                                                  {"ZKLOCK_FENCING_TOKEN", std::to_string(token_)}},
                                     handled_signals_);
        if (r.pid < 0) {
            say(o_.command[0] + ": " + std::strerror(r.error));
            return release(r.error == ENOENT ? 127 : 126);
        }
        child_ = r.pid;
        const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child_, 0));
        if (pidfd < 0) {
            // Cannot happen on Linux >= 5.3; without a pidfd, wait blocking.
            say(std::string("pidfd_open: ") + std::strerror(errno));
            int status = 0;
            while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
            }
            return on_child_exit(status);
        }
        child_wait_.assign(pidfd);
        child_wait_.async_wait(asio::posix::descriptor_base::wait_read, [this](boost::system::error_code) {
            int status = 0;
            while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
            }
            on_child_exit(status);
        });
    }

    void stop_child(int sig) {
        if (child_ <= 0) return;
        ::kill(child_, sig);
        if (kill_armed_) return;
        kill_armed_ = true;
        kill_timer_.expires_after(milliseconds(o_.grace_ms));
        kill_timer_.async_wait([this](boost::system::error_code ec) {
            if (ec || child_ <= 0) return;
            say("command still running after " + std::to_string(o_.grace_ms) + " ms; killing it");
            ::kill(child_, SIGKILL);
        });
    }

    void on_lost(std::error_code ec) {
        // An empty code means we released it; not_held, that it was lost before
        // this wait was registered.
        if (phase_ != phase::running || !ec || ec == std::errc::operation_canceled) return;
        lost_ = true;
        say("lock lost (" + (ec == errc::not_held ? std::string("before the command started") : ec.message()) +
            "); stopping command");
        stop_child(SIGTERM);
    }

    void on_child_exit(int status) {
        child_ = -1;
        kill_timer_.cancel();
        boost::system::error_code ignored;
        child_wait_.close(ignored);
        if (o_.verbose) say("command " + describe_status(status));
        if (lost_) return finish(exit_lock_lost);
        release(stop_signal_ ? 128 + stop_signal_ : shell_status(status));
    }

    void release(int code) {
        phase_ = phase::releasing;
        exit_code_ = code;
        release_timer_.expires_after(release_timeout);
        release_timer_.async_wait([this](boost::system::error_code ec) {
            if (ec) return;
            say("release of " + o_.path + " not confirmed within " + std::to_string(release_timeout.count()) +
                " ms; exiting (the session's end deletes the node)");
            finish(exit_code_);
        });
        mutex_.async_unlock(asio::bind_executor(io_, [this](std::error_code ec) {
            if (phase_ == phase::done) return;
            if (ec == errc::not_held) {
                // Lost while the command ran; the notice had not arrived yet.
                say("lock lost before the command ended");
                exit_code_ = exit_lock_lost;
            } else if (ec) {
                say("release of " + o_.path + ": " + ec.message());
            } else if (o_.verbose) {
                say("released " + o_.path);
            }
            finish(exit_code_);
        }));
    }

    void finish(int code) {
        phase_ = phase::done;
        exit_code_ = code;
        io_.stop();
    }

    run_options o_;
    // io_ outlives the session: the session's thread posts completions to it
    // until the session is destroyed.
    asio::io_context io_{1};
    std::vector<int> handled_signals_;
    asio::signal_set signals_;
    Session session_;
    Mutex mutex_;
    asio::cancellation_signal cancel_;
    asio::steady_timer kill_timer_;
    asio::steady_timer release_timer_;
    asio::posix::stream_descriptor child_wait_;

    phase phase_ = phase::connecting;
    clock_type::time_point started_;
    clock_type::time_point wait_started_;
    std::string node_;
    std::int64_t token_ = 0;
    pid_t child_ = -1;
    int stop_signal_ = 0;
    bool kill_armed_ = false;
    bool lost_ = false;
    int exit_code_ = 1;
};

int run_command(run_options o) {
    if (!o.command.empty() && o.command.front() == "--") o.command.erase(o.command.begin());
    if (o.command.empty()) {
        std::cerr << "zklock: run: no command given (zklock run LOCK_PATH -- CMD [ARGS...])\n";
        return exit_usage;
    }
    if (const auto check = detail::validate_lock_path(o.path); !check) {
        std::cerr << "zklock: " << check.reason << ": '" << o.path << "'\n";
        return exit_usage;
    }
    runner r(std::move(o));
    return r.run();
}

} // namespace

void add_run(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<run_options>();
    auto* cmd = app.add_subcommand("run", "Hold LOCK_PATH while CMD runs; exit with CMD's status");
    cmd->footer(
        "Options go before LOCK_PATH. CMD gets ZKLOCK_LOCK_NODE and ZKLOCK_FENCING_TOKEN in its environment.\n"
        "Exit status: CMD's (128+N if killed by signal N); 75 lock not acquired (-n, -w), CMD not run;\n"
        "76 lock lost while CMD ran (CMD was stopped: SIGTERM, then SIGKILL after --grace);\n"
        "64 bad arguments or lock path; 69 no server reachable; 126/127 CMD not executable / not found;\n"
        "128+N zklock got signal N (forwarded to CMD while it runs). If zklock dies, the kernel kills CMD.");
    add_connect_option(*cmd, o->connect);
    cmd->add_option("--session-timeout", o->session_timeout_ms, "Requested ZooKeeper session timeout in ms")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    auto* wait = cmd->add_option_function<int>(
                        "-w,--timeout", [o](int ms) { o->wait_ms = ms; },
                        "Give up (exit 75) if the lock is not acquired within MS ms (also the connect deadline)")
                     ->type_name("MS")
                     ->check(CLI::NonNegativeNumber);
    cmd->add_flag("-n,--nonblock", o->no_wait, "Fail at once (exit 75) if the lock is held")->excludes(wait);
    cmd->add_option("--grace", o->grace_ms, "After SIGTERM to CMD, wait this long before SIGKILL (ms)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("-v,--verbose", o->verbose, "Report waiting, acquiring and releasing on stderr");
    cmd->add_option("LOCK_PATH", o->path, "Lock znode, e.g. /locks/nightly-report")->required();
    cmd->add_option("CMD", o->command, "Command and arguments (after --)")->required();
    cmd->positionals_at_end();
    cmd->callback([o, &exit_code] { exit_code = run_command(*o); });
}

} // namespace zklock::cli
