// zklock run: hold a lock (or, with --permits, one permit of a semaphore) while a
// command runs (flock(1), `etcdctl lock`, `consul lock [-n K]`).
// Also the CMD-as-a-child helpers that `zklock elect` shares (commands.hpp).
#include "commands.hpp"

#include <zklock/detail/path.hpp>
#include <zklock/mutex.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/session.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
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
namespace asio = boost::asio;
using std::chrono::milliseconds;

// --- CMD as a child (shared with elect) -----------------------------------------------

void notice(const std::string& what) { std::cerr << "zklock: " << what << std::endl; }

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

std::vector<int> stop_signals() {
    std::vector<int> out;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction current {};
        if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        out.push_back(sig);
    }
    return out;
}

namespace {

struct spawn_result {
    pid_t pid = -1;
    int error = 0;  // errno of the failed fork or exec
};

// fork + exec rather than posix_spawn: the child must ask for PR_SET_PDEATHSIG.
// The lock dies with zklock's session, so a command that outlived zklock (kill -9)
// would run unprotected; the kernel kills it instead.
spawn_result spawn_command(const std::vector<std::string>& command, const command_child::environment& extra_env,
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

int reap(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

} // namespace

command_child::command_child(asio::io_context& io, milliseconds grace, std::vector<int> handled_signals)
    : io_(io), grace_(grace), handled_signals_(std::move(handled_signals)), kill_timer_(io), wait_(io) {}

command_child::~command_child() {
    // zklock is exiting with CMD still running (it cannot, by the runners' logic,
    // but if it did, PR_SET_PDEATHSIG would kill it a moment later anyway).
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        reap(pid_);
    }
}

int command_child::start(const std::vector<std::string>& command, const environment& env,
                         std::function<void(int)> on_exit) {
    const auto r = spawn_command(command, env, handled_signals_);
    if (r.pid < 0) return r.error;
    pid_ = r.pid;
    kill_armed_ = false;
    on_exit_ = std::move(on_exit);
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd < 0) {
        // Cannot happen on Linux >= 5.3; without a pidfd, wait blocking.
        notice(std::string("pidfd_open: ") + std::strerror(errno));
        const int status = reap(pid_);
        asio::post(io_, [this, status] { exited_with(status); });
        return 0;
    }
    wait_.assign(pidfd);
    wait_for_exit();
    return 0;
}

void command_child::wait_for_exit() {
    wait_.async_wait(asio::posix::descriptor_base::wait_read, [this](boost::system::error_code ec) {
        if (ec == asio::error::operation_aborted || pid_ <= 0) return;
        int status = 0;
        pid_t r;
        while ((r = ::waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
        }
        if (r == 0) return wait_for_exit();  // readable before the exit (should not happen): wait on
        if (r < 0) {
            notice(std::string("waitpid: ") + std::strerror(errno));
            status = 1 << 8;  // "exited with 1": its real status is lost
        }
        exited_with(status);
    });
}

void command_child::exited_with(int status) {
    pid_ = -1;
    kill_timer_.cancel();
    boost::system::error_code ignored;
    wait_.close(ignored);
    if (auto cb = std::exchange(on_exit_, nullptr)) cb(status);
}

void command_child::stop(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    if (kill_armed_) return;
    kill_armed_ = true;
    kill_timer_.expires_after(grace_);
    kill_timer_.async_wait([this](boost::system::error_code ec) {
        if (ec || pid_ <= 0) return;
        notice("command still running after " + std::to_string(grace_.count()) + " ms; killing it");
        ::kill(pid_, SIGKILL);
    });
}

// --- zklock run ------------------------------------------------------------------------

namespace {
using clock_type = std::chrono::steady_clock;

struct run_options {
    std::string connect;
    int session_timeout_ms = 10000;
    std::optional<int> wait_ms;  // -w: give up after this long
    bool no_wait = false;        // -n
    std::optional<int> permits;  // --permits K: a semaphore lease instead of the lock
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

// What `zklock run` holds while CMD runs: the lock (a Mutex) or one permit of a
// semaphore (a Lease). Every completion runs on the runner's io_context.
class holding {
public:
    using acquire_handler = std::function<void(std::error_code, bool acquired)>;
    using done_handler = std::function<void(std::error_code)>;
    virtual ~holding() = default;
    /// -n: only if free now; -w: within `wait` (then acquired=false without error);
    /// otherwise until granted.
    virtual void acquire(bool no_wait, std::optional<milliseconds> wait, acquire_handler done) = 0;
    /// Cancels a pending acquire: it completes with operation_canceled, no node left.
    virtual void cancel() = 0;
    virtual std::string node_path() const = 0;
    virtual std::int64_t fencing_token() const = 0;
    /// As Mutex::async_wait_lost.
    virtual void wait_lost(done_handler done) = 0;
    /// Releases; errc::not_held when it was lost first.
    virtual void release(done_handler done) = 0;
    /// Why -n did not get it.
    virtual std::string busy_message() const = 0;
};

class lock_holding final : public holding {
public:
    lock_holding(asio::io_context& io, Session& session, const std::string& path) : io_(io), mutex_(session, path) {}

    void acquire(bool no_wait, std::optional<milliseconds> wait, acquire_handler done) override {
        const auto bind = [this](auto handler) {
            return asio::bind_cancellation_slot(cancel_.slot(), asio::bind_executor(io_, std::move(handler)));
        };
        if (no_wait) return mutex_.async_try_lock(bind(std::move(done)));
        if (wait) return mutex_.async_try_lock_for(*wait, bind(std::move(done)));
        mutex_.async_lock(bind([done = std::move(done)](std::error_code e) { done(e, !e); }));
    }
    // Mutex completes on io_ and detaches the cancellation handler there: emit here.
    void cancel() override { cancel_.emit(asio::cancellation_type::terminal); }
    std::string node_path() const override { return mutex_.node_path(); }
    std::int64_t fencing_token() const override { return mutex_.fencing_token(); }
    void wait_lost(done_handler done) override { mutex_.async_wait_lost(asio::bind_executor(io_, std::move(done))); }
    void release(done_handler done) override { mutex_.async_unlock(asio::bind_executor(io_, std::move(done))); }
    std::string busy_message() const override { return "lock " + mutex_.path() + " is held by someone else"; }

private:
    asio::io_context& io_;
    Mutex mutex_;
    asio::cancellation_signal cancel_;
};

class lease_holding final : public holding {
public:
    lease_holding(asio::io_context& io, Session& session, const std::string& path, std::size_t permits)
        : io_(io), session_(session), semaphore_(session, path, permits), deadline_(io) {}

    void acquire(bool no_wait, std::optional<milliseconds> wait, acquire_handler done) override {
        if (no_wait) {
            // Semaphore has no asynchronous try: a blocking one, on a connected session.
            std::error_code ec;
            bool acquired = false;
            try {
                if (auto lease = semaphore_.try_acquire()) {
                    lease_ = std::move(*lease);
                    acquired = true;
                }
            } catch (const error& e) {
                ec = e.code();
            }
            asio::post(io_, [done = std::move(done), ec, acquired] { done(ec, acquired); });
            return;
        }
        pending_ = true;
        if (wait) {
            deadline_.expires_after(*wait);
            deadline_.async_wait([this](boost::system::error_code ec) {
                if (ec || !pending_) return;
                timed_out_ = true;
                cancel();
            });
        }
        semaphore_.async_acquire(asio::bind_cancellation_slot(
            cancel_->slot(),
            asio::bind_executor(io_, [this, done = std::move(done)](std::error_code ec, Lease lease) {
                pending_ = false;
                deadline_.cancel();
                if (!ec) {
                    lease_ = std::move(lease);
                    return done({}, true);
                }
                if (ec == std::errc::operation_canceled && timed_out_) return done({}, false);
                done(ec, false);
            })));
    }
    // The semaphore's inner acquire detaches its cancellation handler on the
    // session's executor (before the completion reaches io_): emit there, so the
    // emit never races with that. The signal outlives a late emit.
    void cancel() override {
        if (!pending_) return;
        asio::post(session_.get_executor(), [signal = cancel_] { signal->emit(asio::cancellation_type::terminal); });
    }
    std::string node_path() const override { return lease_ ? lease_->node_path() : std::string(); }
    std::int64_t fencing_token() const override { return lease_ ? lease_->fencing_token() : 0; }
    void wait_lost(done_handler done) override {
        if (!lease_) return asio::post(io_, [done = std::move(done)] { done(make_error_code(errc::not_held)); });
        lease_->async_wait_lost(asio::bind_executor(io_, std::move(done)));
    }
    void release(done_handler done) override {
        // Lease has no asynchronous release: release() hands the delete to the
        // session, and closing the session as zklock exits ends the node anyway.
        const bool held = lease_ && lease_->is_held();
        if (lease_) lease_->release();
        asio::post(io_, [done = std::move(done), held] {
            done(held ? std::error_code() : make_error_code(errc::not_held));
        });
    }
    std::string busy_message() const override {
        return "all " + std::to_string(semaphore_.permits()) + " permits of " + semaphore_.path() +
               " are held by others";
    }

private:
    asio::io_context& io_;
    Session& session_;
    Semaphore semaphore_;
    std::optional<Lease> lease_;
    std::shared_ptr<asio::cancellation_signal> cancel_ = std::make_shared<asio::cancellation_signal>();
    asio::steady_timer deadline_;
    bool pending_ = false;
    bool timed_out_ = false;
};

// One `zklock run`: everything happens on io_ in the main thread; the Session
// runs its own thread and posts completions here.
class runner {
public:
    explicit runner(run_options o)
        : o_(std::move(o)),
          handled_signals_(stop_signals()),
          signals_(io_),
          session_(session_options(o_)),
          hold_(o_.permits ? std::unique_ptr<holding>(std::make_unique<lease_holding>(
                                 io_, session_, o_.path, static_cast<std::size_t>(*o_.permits)))
                           : std::make_unique<lock_holding>(io_, session_, o_.path)),
          child_(io_, milliseconds(o_.grace_ms), handled_signals_),
          release_timer_(io_) {}

    int run() {
        for (int sig : handled_signals_) signals_.add(sig);
        wait_for_signal();
        started_ = clock_type::now();
        if (o_.verbose) notice("connecting to " + o_.connect);
        session_.async_connect(asio::bind_cancellation_slot(
            connect_cancel_.slot(), asio::bind_executor(io_, [this](std::error_code ec) { on_connected(ec); })));
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

    std::string what() const {
        return o_.permits ? "a permit of " + o_.path + " (" + std::to_string(*o_.permits) + " permits)"
                          : "lock " + o_.path;
    }

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
            stop_signal_ = sig;
            connect_cancel_.emit(asio::cancellation_type::terminal);
            break;
        case phase::acquiring:
            // The pending acquire completes with operation_canceled (it deletes its
            // node first), and that handler exits.
            stop_signal_ = sig;
            hold_->cancel();
            break;
        case phase::running:
            if (!stop_signal_) stop_signal_ = sig;
            child_.stop(sig);
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
                notice("could not connect to " + o_.connect + " within " +
                       std::to_string(session_.options().connect_timeout.count()) + " ms");
            } else if (ec == errc::invalid_argument) {
                notice("invalid connect string '" + o_.connect + "'");
                return finish(exit_usage);
            } else {
                notice("could not connect to " + o_.connect + ": " + ec.message());
            }
            return finish(exit_unavailable);
        }
        phase_ = phase::acquiring;
        if (o_.verbose) notice("waiting for " + what());
        wait_started_ = clock_type::now();
        std::optional<milliseconds> wait;
        // -w bounds the connect and the wait together.
        if (o_.wait_ms) wait = std::max(milliseconds(*o_.wait_ms) - milliseconds(elapsed_ms(started_)), milliseconds(1));
        hold_->acquire(o_.no_wait, wait, [this](std::error_code e, bool ok) { on_acquired(e, ok); });
    }

    void on_acquired(std::error_code ec, bool acquired) {
        if (ec == std::errc::operation_canceled || (stop_signal_ && !acquired)) return finish(128 + stop_signal_);
        if (ec == errc::permits_mismatch) {
            notice(o_.path + " is a semaphore with a different number of permits");
            return finish(exit_usage);
        }
        if (ec) {
            notice("could not acquire " + what() + ": " + ec.message());
            return finish(exit_unavailable);
        }
        if (!acquired) {
            if (o_.no_wait) notice(hold_->busy_message());
            else notice(what() + " not acquired within " + std::to_string(*o_.wait_ms) + " ms");
            return finish(exit_not_acquired);
        }
        if (stop_signal_) return release(128 + stop_signal_);  // signalled as the grant arrived
        node_ = hold_->node_path();
        token_ = hold_->fencing_token();
        if (o_.verbose)
            notice("acquired " + what() + " (node " + node_ + ", fencing token " + std::to_string(token_) + ") after " +
                   std::to_string(elapsed_ms(wait_started_)) + " ms");
        phase_ = phase::running;
        hold_->wait_lost([this](std::error_code e) { on_lost(e); });
        start_command();
    }

    void start_command() {
        const int err = child_.start(o_.command,
                                     {{"ZKLOCK_LOCK_NODE", node_}, {"ZKLOCK_FENCING_TOKEN", std::to_string(token_)}},
                                     [this](int status) { on_child_exit(status); });
        if (err) {
            notice(o_.command[0] + ": " + std::strerror(err));
            release(err == ENOENT ? 127 : 126);
        }
    }

    void on_lost(std::error_code ec) {
        // An empty code means we released it; not_held, that it was lost before
        // this wait was registered.
        if (phase_ != phase::running || !ec || ec == std::errc::operation_canceled) return;
        lost_ = true;
        notice((o_.permits ? "permit lost (" : "lock lost (") +
               (ec == errc::not_held ? std::string("before the command started") : ec.message()) +
               "); stopping command");
        child_.stop(SIGTERM);
    }

    void on_child_exit(int status) {
        if (o_.verbose) notice("command " + describe_status(status));
        if (lost_) return finish(exit_lock_lost);
        release(stop_signal_ ? 128 + stop_signal_ : shell_status(status));
    }

    void release(int code) {
        phase_ = phase::releasing;
        exit_code_ = code;
        release_timer_.expires_after(release_timeout);
        release_timer_.async_wait([this](boost::system::error_code ec) {
            if (ec || phase_ == phase::done) return;
            notice("release of " + o_.path + " not confirmed within " + std::to_string(release_timeout.count()) +
                   " ms; exiting (the session's end deletes the node)");
            finish(exit_code_);
        });
        hold_->release([this](std::error_code ec) {
            if (phase_ == phase::done) return;
            if (ec == errc::not_held) {
                // Lost while the command ran; the notice had not arrived yet.
                notice((o_.permits ? "permit" : "lock") + std::string(" lost before the command ended"));
                exit_code_ = exit_lock_lost;
            } else if (ec) {
                notice("release of " + o_.path + ": " + ec.message());
            } else if (o_.verbose) {
                notice("released " + what());
            }
            finish(exit_code_);
        });
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
    std::unique_ptr<holding> hold_;  // destroyed before the session it uses
    asio::cancellation_signal connect_cancel_;
    command_child child_;
    asio::steady_timer release_timer_;

    phase phase_ = phase::connecting;
    clock_type::time_point started_;
    clock_type::time_point wait_started_;
    std::string node_;
    std::int64_t token_ = 0;
    int stop_signal_ = 0;
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
        "With --permits K, LOCK_PATH is a semaphore: up to K holders at once (every participant must use the same K).\n"
        "Exit status: CMD's (128+N if killed by signal N); 75 lock not acquired (-n, -w), CMD not run;\n"
        "76 lock lost while CMD ran (CMD was stopped: SIGTERM, then SIGKILL after --grace);\n"
        "64 bad arguments or lock path, or a semaphore with a different number of permits;\n"
        "69 no server reachable; 126/127 CMD not executable / not found;\n"
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
    cmd->add_option_function<int>(
           "--permits", [o](int k) { o->permits = k; },
           "Semaphore mode: hold one of K permits of LOCK_PATH instead of the lock (as consul lock -n K)")
        ->type_name("K")
        ->check(CLI::PositiveNumber);
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
