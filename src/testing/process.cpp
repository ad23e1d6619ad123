#include "zklock/testing/process.hpp"

#include "testing/posix_io.hpp"
#include "testing/timed_resume.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;

using posix_io::throw_errno;

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) noexcept : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    [[nodiscard]] int get() const noexcept { return fd_; }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

std::string find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    const char* env_path = std::getenv("PATH");
    std::string_view path = (env_path != nullptr && *env_path != '\0') ? env_path : "/usr/local/bin:/usr/bin:/bin";
    while (true) {
        const auto colon = path.find(':');
        std::string dir(path.substr(0, colon));
        if (dir.empty()) dir = ".";
        std::string candidate = dir + "/" + name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        if (colon == std::string_view::npos) break;
        path.remove_prefix(colon + 1);
    }
    throw_errno(ENOENT, "ChildProcess: program '" + name + "' not found in PATH");
}

std::vector<std::string> build_environment(const std::vector<std::pair<std::string, std::string>>& additions) {
    std::vector<std::string> result;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view entry(*e);
        const auto key = entry.substr(0, entry.find('='));
        const bool overridden = std::any_of(additions.begin(), additions.end(),
                                            [&](const auto& kv) { return kv.first == key; });
        if (!overridden) result.emplace_back(entry);
    }
    for (const auto& [key, value] : additions) result.push_back(key + "=" + value);
    return result;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> result;
    result.reserve(strings.size() + 1);
    for (auto& s : strings) result.push_back(s.data());
    result.push_back(nullptr);
    return result;
}

enum class spawn_step : int { prctl = 1, output, chdir, exec };

struct spawn_failure {
    int step;
    int error;
};

[[noreturn]] void child_fail(int report_fd, spawn_step step) noexcept {
    const spawn_failure failure{static_cast<int>(step), errno};
    [[maybe_unused]] auto n = ::write(report_fd, &failure, sizeof failure);
    ::_exit(127);
}

void mark_descriptors_cloexec() noexcept {
    constexpr unsigned close_range_cloexec = 1U << 2;
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, 3U, ~0U, close_range_cloexec) == 0) return;
#endif
    const long max_fd = std::min(::sysconf(_SC_OPEN_MAX), 65536L);
    for (int fd = 3; fd < max_fd; ++fd) {
        const int flags = ::fcntl(fd, F_GETFD);
        if (flags >= 0 && (flags & FD_CLOEXEC) == 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

const char* step_name(int step) {
    switch (static_cast<spawn_step>(step)) {
    case spawn_step::prctl: return "prctl(PR_SET_PDEATHSIG)";
    case spawn_step::output: return "redirecting stdin/stdout/stderr";
    case spawn_step::chdir: return "chdir";
    case spawn_step::exec: return "exec";
    }
    return "spawn";
}

}  // namespace

ChildProcess::ChildProcess(std::vector<std::string> argv, ChildProcessOptions options)
    : argv_(std::move(argv)), options_(std::move(options)) {
    if (argv_.empty()) throw std::invalid_argument("ChildProcess: empty argv");
    spawn();
}

void ChildProcess::spawn() {
    const std::string program = find_program(argv_[0]);
    auto argv = argv_;
    auto argv_ptrs = c_strings(argv);
    auto env = build_environment(options_.env);
    auto env_ptrs = c_strings(env);
    const std::string working_dir = options_.working_dir.string();

    Fd output;
    if (!options_.output_path.empty()) {
        output.reset(::open(options_.output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
        if (output.get() < 0) throw_errno(errno, "ChildProcess: cannot open " + options_.output_path.string());
        if (output.get() <= STDERR_FILENO) {
            const int moved = ::fcntl(output.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
            if (moved < 0) throw_errno(errno, "ChildProcess: fcntl");
            output.reset(moved);
        }
    }

    Fd input(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (input.get() < 0) throw_errno(errno, "ChildProcess: cannot open /dev/null");

    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) throw_errno(errno, "ChildProcess: pipe2");
    Fd report_read(report[0]);
    Fd report_write(report[1]);

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw_errno(errno, "ChildProcess: fork");
    if (pid == 0) {
        ::setpgid(0, 0);
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(report_write.get(), spawn_step::prctl);
        if (::getppid() != parent) ::_exit(127);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        ::sigemptyset(&dfl.sa_mask);
        for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
        sigset_t empty;
        ::sigemptyset(&empty);
        ::sigprocmask(SIG_SETMASK, &empty, nullptr);
        if (::dup2(input.get(), STDIN_FILENO) < 0) child_fail(report_write.get(), spawn_step::output);
        if (output.get() >= 0) {
            if (::dup2(output.get(), STDOUT_FILENO) < 0 || ::dup2(output.get(), STDERR_FILENO) < 0) {
                child_fail(report_write.get(), spawn_step::output);
            }
        }
        mark_descriptors_cloexec();
        if (!working_dir.empty() && ::chdir(working_dir.c_str()) != 0) {
            child_fail(report_write.get(), spawn_step::chdir);
        }
        ::execve(program.c_str(), argv_ptrs.data(), env_ptrs.data());
        child_fail(report_write.get(), spawn_step::exec);
    }

    ::setpgid(pid, pid);
    report_write.reset();
    spawn_failure failure{};
    ssize_t n = 0;
    do {
        n = ::read(report_read.get(), &failure, sizeof failure);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof failure)) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        throw_errno(failure.error, std::string("ChildProcess: ") + step_name(failure.step) + " failed for " + program);
    }
    pid_ = pid;
    status_.reset();
    stopped_ = false;
#ifdef SYS_pidfd_open
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
}

ChildProcess::~ChildProcess() { release(); }

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : argv_(std::move(other.argv_)), options_(std::move(other.options_)), pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)), status_(std::exchange(other.status_, std::nullopt)),
      stopped_(std::exchange(other.stopped_, false)), timed_resume_(std::move(other.timed_resume_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        release();
        argv_ = std::move(other.argv_);
        options_ = std::move(other.options_);
        pid_ = std::exchange(other.pid_, -1);
        pidfd_ = std::exchange(other.pidfd_, -1);
        status_ = std::exchange(other.status_, std::nullopt);
        stopped_ = std::exchange(other.stopped_, false);
        timed_resume_ = std::move(other.timed_resume_);
    }
    return *this;
}

void ChildProcess::cancel_timed_resume() noexcept {
    if (!timed_resume_) return;
    if (timed_resume_->cancel()) stopped_ = false;
    timed_resume_.reset();
}

void ChildProcess::release() noexcept {
    cancel_timed_resume();
    if (pid_ > 0 && !status_) {
        try {
            kill9();
        } catch (...) {
        }
    }
    if (pidfd_ >= 0) ::close(pidfd_);
    pidfd_ = -1;
}

pid_t ChildProcess::pid() const noexcept { return pid_; }

std::string ChildProcess::name() const {
    const std::string program = argv_.empty() ? std::string("?") : std::filesystem::path(argv_[0]).filename().string();
    return "process " + std::to_string(pid_) + " (" + program + ")";
}

std::optional<int> ChildProcess::exit_status() const noexcept { return status_; }

bool ChildProcess::try_reap() noexcept {
    if (status_) return true;
    if (pid_ <= 0) return false;
    int status = 0;
    pid_t r = 0;
    do {
        r = ::waitpid(pid_, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid_) {
        status_ = status;
    } else if (r < 0) {
        status_ = -1;
    } else {
        return false;
    }
    if (pidfd_ >= 0) ::close(pidfd_);
    pidfd_ = -1;
    cancel_timed_resume();  // nothing left to resume; its pid may be reused from now on
    return true;
}

bool ChildProcess::running() { return pid_ > 0 && !try_reap(); }

bool ChildProcess::signal(int sig) noexcept {
    if (pid_ <= 0 || status_) return false;
    return ::kill(-pid_, sig) == 0;
}

bool ChildProcess::pause() noexcept {
    cancel_timed_resume();
    if (stopped_ && !status_) return true;
    if (!signal(SIGSTOP)) return false;
    const auto deadline = steady::now() + std::chrono::seconds(5);
    while (steady::now() < deadline) {
        int status = 0;
        const pid_t r = ::waitpid(pid_, &status, WUNTRACED | WNOHANG);
        if (r == pid_ && WIFSTOPPED(status)) break;
        if (r == pid_) {
            status_ = status;
            return false;
        }
        if (r < 0 && errno != EINTR) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stopped_ = true;
    return true;
}

bool ChildProcess::resume() noexcept {
    cancel_timed_resume();
    stopped_ = false;
    return signal(SIGCONT);
}

bool ChildProcess::pause_for(std::chrono::milliseconds duration) {
    if (!pause()) return false;
    timed_resume_ = std::make_unique<detail::TimedResume>(std::vector<pid_t>{-pid_}, duration);
    return true;
}

bool ChildProcess::paused() const noexcept {
    return stopped_ && !status_ && !(timed_resume_ && timed_resume_->fired());
}

void ChildProcess::restart() {
    if (pid_ <= 0) throw std::logic_error("ChildProcess::restart on a moved-from object");
    stop();
    if (pidfd_ >= 0) ::close(pidfd_);
    pidfd_ = -1;
    spawn();
}

std::optional<int> ChildProcess::wait_exit(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return std::nullopt;
    const auto deadline = steady::now() + timeout;
    while (true) {
        if (try_reap()) return status_;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
        if (left.count() <= 0) return std::nullopt;
        if (pidfd_ >= 0) {
            pollfd p{pidfd_, POLLIN, 0};
            const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30)));
            if (r < 0 && errno != EINTR) throw_errno(errno, "ChildProcess: poll(pidfd)");
        } else {
            std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(5)));
        }
    }
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
    if (pid_ <= 0) throw std::logic_error("ChildProcess::stop on a moved-from object");
    cancel_timed_resume();
    if (try_reap()) return *status_;
    signal(SIGTERM);
    resume();
    if (auto status = wait_exit(grace)) return *status;
    return kill9();
}

int ChildProcess::kill9() {
    if (pid_ <= 0) throw std::logic_error("ChildProcess::kill9 on a moved-from object");
    cancel_timed_resume();
    if (try_reap()) return *status_;
    signal(SIGKILL);
    int status = 0;
    pid_t r = 0;
    do {
        r = ::waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    status_ = (r == pid_) ? status : -1;
    if (pidfd_ >= 0) ::close(pidfd_);
    pidfd_ = -1;
    return *status_;
}

std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const char* name = ::sigabbrev_np(WTERMSIG(status));
        return "killed by signal " + std::to_string(WTERMSIG(status)) + (name ? std::string(" (SIG") + name + ")" : "");
    }
    return "wait status " + std::to_string(status);
}

}  // namespace zklock::testing
