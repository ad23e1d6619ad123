#include "command_child.hpp"

#include "commands.hpp"
#include "descriptors.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace zklock::cli {
namespace asio = boost::asio;
using std::chrono::milliseconds;

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

namespace {

struct spawn_result {
    pid_t pid = -1;
    int error = 0;  // errno of the failed fork or exec
};

// zklock's environment with `extra` added (replacing a variable of the same
// name), without the auth file's name: CMD has no business with zklock's credentials.
std::vector<std::string> child_environment(const command_child::environment& extra) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        const auto key = entry.substr(0, entry.find('='));
        if (key == auth_file_variable) continue;
        const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const auto& kv) { return kv.first == key; });
        if (!replaced) env.emplace_back(entry);
    }
    for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
    return env;
}

// fork + exec rather than posix_spawn: the child must ask for PR_SET_PDEATHSIG.
// The lock dies with zklock's session, so a command that outlived zklock (kill -9)
// would run unprotected; the kernel kills it instead.
spawn_result spawn_command(const std::vector<std::string>& command, const command_child::environment& extra_env) {
    auto env = child_environment(extra_env);
    std::vector<char*> envp;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = command;
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);

    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) return {-1, errno};
    // Everything the child does between fork and exec must be async-signal-safe:
    // the descriptors to close are worked out here. The report pipe stays open
    // in the child until exec closes it (O_CLOEXEC).
    auto keep = inherited_descriptors();
    keep.push_back(report[1]);
    const auto gaps = descriptor_gaps(std::move(keep));
    const long max_fd = ::sysconf(_SC_OPEN_MAX);
    // Signals stay blocked across fork (zklock blocks its stop signals for the
    // signalfd anyway); the child unblocks them just before exec.
    sigset_t all;
    sigset_t old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
        close_descriptor_ranges(gaps.data(), gaps.size(), max_fd);
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
        sigset_t none;
        ::sigemptyset(&none);
        ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
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

command_child::command_child(asio::io_context& io, milliseconds grace)
    : io_(io), grace_(grace), kill_timer_(io), wait_(io) {}

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
    const auto r = spawn_command(command, env);
    if (r.pid < 0) return r.error;
    pid_ = r.pid;
    kill_armed_ = false;
    on_exit_ = std::move(on_exit);
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));  // close-on-exec
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

void command_child::stop(int sig, bool send) {
    if (pid_ <= 0) return;
    if (send) ::kill(pid_, sig);
    if (kill_armed_) return;
    kill_armed_ = true;
    kill_timer_.expires_after(grace_);
    kill_timer_.async_wait([this](boost::system::error_code ec) {
        if (ec || pid_ <= 0) return;
        notice("command still running after " + std::to_string(grace_.count()) + " ms; killing it");
        ::kill(pid_, SIGKILL);
    });
}

} // namespace zklock::cli
