#include "zklock/testing/server_process.hpp"

#include "testing/log_tail.hpp"
#include "testing/posix_io.hpp"
#include "testing/server_account.hpp"
#include "testing/timed_resume.hpp"

#include <stdexcept>
#include <thread>

#include <signal.h>
#include <sys/wait.h>

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds poll_interval{10};
constexpr milliseconds probe_timeout{1000};
constexpr milliseconds server_stop_grace{5000};

}  // namespace

ServerProcess::ServerProcess(std::string kind, milliseconds start_timeout)
    : kind_(std::move(kind)), start_timeout_(start_timeout) {}

void ServerProcess::configure(std::uint16_t port, std::filesystem::path log_path, std::filesystem::path location) {
    port_ = port;
    log_path_ = std::move(log_path);
    location_ = std::move(location);
}

ServerProcess::~ServerProcess() { cancel_timed_resume(); }

std::string ServerProcess::name() const { return kind_ + " on " + connect_string(); }

std::uint16_t ServerProcess::port() const noexcept { return port_; }

std::string ServerProcess::connect_string() const { return "127.0.0.1:" + std::to_string(port_); }

pid_t ServerProcess::pid() const noexcept { return process_ && !process_->exit_status() ? process_->pid() : -1; }

bool ServerProcess::running() {
    if (process_ && process_->running()) return true;
    cancel_timed_resume();
    return false;
}

bool ServerProcess::paused() const noexcept { return paused_ && !(timed_resume_ && timed_resume_->fired()); }

void ServerProcess::cancel_timed_resume() noexcept {
    if (!timed_resume_) return;
    const bool fired = timed_resume_->cancel();
    timed_resume_.reset();
    if (fired) {
        paused_ = false;
        if (process_) process_->resume();  // its own bookkeeping; one more SIGCONT does no harm
    }
}

void ServerProcess::stop() {
    cancel_timed_resume();
    if (process_) {
        stop_process();
        process_.reset();
    }
    paused_ = false;
}

int ServerProcess::kill9() {
    cancel_timed_resume();
    int status = -1;
    if (process_) {
        kill_process();
        status = process_->kill9();  // reaps (or returns the status kill_process() reaped)
        process_.reset();
    }
    paused_ = false;
    return status;
}

void ServerProcess::restart() {
    stop();
    spawn();
    wait_until_serving(steady::now() + start_timeout_);
}

bool ServerProcess::pause() {
    cancel_timed_resume();
    if (!process_) return false;
    if (!paused_ && pause_process()) paused_ = true;
    return paused_;
}

bool ServerProcess::resume() {
    cancel_timed_resume();
    if (!process_ || !paused_) {
        paused_ = false;
        return false;
    }
    for (const pid_t target : resume_targets()) {
        if (target != -process_->pid()) ::kill(target, SIGCONT);
    }
    paused_ = false;
    return process_->resume();
}

bool ServerProcess::pause_for(milliseconds duration) {
    if (!pause()) return false;
    timed_resume_ = std::make_unique<detail::TimedResume>(resume_targets(), duration);
    return true;
}

void ServerProcess::stop_process() { process_->stop(server_stop_grace); }

void ServerProcess::kill_process() noexcept {
    try {
        process_->kill9();
    } catch (...) {
    }
}

bool ServerProcess::pause_process() noexcept { return process_->pause(); }

std::vector<pid_t> ServerProcess::resume_targets() const {
    if (!process_) return {};
    return {-process_->pid()};
}

void ServerProcess::run_as(const std::string& os_user, const std::filesystem::path& directory) {
    account_ = std::make_unique<detail::ServerAccount>(kind_, os_user, directory);
}

uid_t ServerProcess::server_uid() const noexcept { return account_ ? account_->uid() : uid_t(-1); }

gid_t ServerProcess::server_gid() const noexcept { return account_ ? account_->gid() : gid_t(-1); }

void ServerProcess::run_setup(const std::string& what, std::vector<std::string> argv, ChildProcessOptions options,
                              steady::time_point deadline) {
    const auto log = options.output_path;
    ChildProcess process(account_ ? account_->command(std::move(argv)) : std::move(argv), std::move(options));
    const auto status = process.wait_exit(posix_io::until(deadline, start_timeout_));
    if (!status) {
        process.kill9();
        fail_start(what + " did not finish within " + std::to_string(start_timeout_.count()) + " ms", log);
    }
    if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
        fail_start(what + " " + describe_wait_status(*status) + (account_ ? account_->reach_hint() : std::string()), log);
}

void ServerProcess::launch(std::vector<std::string> argv, ChildProcessOptions options) {
    cancel_timed_resume();
    process_.reset();
    process_.emplace(account_ ? account_->command(std::move(argv)) : std::move(argv), std::move(options));
    paused_ = false;
}

void ServerProcess::stop_by_signal(int sig, milliseconds grace) {
    if (paused()) resume();
    if (process_->running()) {
        process_->signal(sig);
        process_->resume();
        if (!process_->wait_exit(grace)) kill_process();
    }
}

void ServerProcess::wait_until_serving(steady::time_point deadline) {
    while (true) {
        if (!process_ || !process_->running()) {
            fail_start("the server process " + (process_ && process_->exit_status()
                                                    ? describe_wait_status(*process_->exit_status())
                                                    : std::string("is not running")));
        }
        if (serving(posix_io::until(deadline, probe_timeout))) return;
        if (steady::now() >= deadline) {
            fail_start("the server did not serve within " + std::to_string(start_timeout_.count()) + " ms");
        }
        std::this_thread::sleep_for(posix_io::until(deadline, poll_interval));  // allowed: polling interval of a deadline wait
    }
}

void ServerProcess::fail_start(const std::string& why, const std::filesystem::path& log) {
    const auto& shown = log.empty() ? log_path_ : log;
    std::string message = name() + (location_.empty() ? std::string() : " (" + location_.string() + ")") +
                          " failed to start: " + why;
    if (const auto errors = detail::error_lines_before_tail(shown, 20, 10); !errors.empty())
        message += "\n--- errors in " + shown.string() + " ---\n" + errors;
    message += "\n--- last lines of " + shown.string() + " ---\n" + detail::last_lines(shown, 20);
    cancel_timed_resume();
    if (process_) {
        kill_process();
        process_.reset();
    }
    paused_ = false;
    throw std::runtime_error(message);
}

const std::filesystem::path& ServerProcess::log_path() const noexcept { return log_path_; }

std::string ServerProcess::log_tail(std::size_t lines) const { return detail::last_lines(log_path_, lines); }

}  // namespace zklock::testing
