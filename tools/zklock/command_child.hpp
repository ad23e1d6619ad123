// CMD as zklock's child (run, elect).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace zklock::cli {

/// "exited with N" / "killed by signal S" for a waitpid status.
std::string describe_status(int wait_status);
/// The status a shell reports for a waitpid status: the exit code, or 128+N for signal N.
int shell_status(int wait_status);

/// CMD as zklock's child: fork/exec with extra environment variables, waited on
/// with a pidfd on `io`; stopped with a signal, then SIGKILL after the grace
/// period. The child asks for PR_SET_PDEATHSIG, so it does not outlive zklock and
/// with it the lock's session. It gets descriptors 0, 1, 2 and those zklock
/// inherited (inherited_descriptors()), nothing zklock opened; and zklock's
/// environment without ZKLOCK_AUTH_FILE. Used from io's thread only.
class command_child {
public:
    using environment = std::vector<std::pair<std::string, std::string>>;

    command_child(boost::asio::io_context& io, std::chrono::milliseconds grace);
    ~command_child();
    command_child(const command_child&) = delete;
    command_child& operator=(const command_child&) = delete;

    /// Starts `command` with `env` added to zklock's environment; `on_exit(wait_status)`
    /// runs on io when it has ended and been reaped. Returns 0, or the errno of the
    /// failed fork or exec (ENOENT: not found); on_exit is then never called.
    int start(const std::vector<std::string>& command, const environment& env, std::function<void(int)> on_exit);
    /// True from start() until on_exit is called.
    bool running() const noexcept { return pid_ > 0; }
    /// Stops CMD: sends `sig` (to CMD, not to its process group, which is
    /// zklock's) when `send`, and the first call per command arms SIGKILL after
    /// the grace period. `send` is false for a signal CMD got already (the
    /// terminal's Ctrl-C reaches the whole foreground group). Does nothing when
    /// not running.
    void stop(int sig, bool send = true);

private:
    void wait_for_exit();
    void exited_with(int wait_status);

    boost::asio::io_context& io_;
    std::chrono::milliseconds grace_;
    boost::asio::steady_timer kill_timer_;
    boost::asio::posix::stream_descriptor wait_;
    std::function<void(int)> on_exit_;
    pid_t pid_ = -1;
    bool kill_armed_ = false;
};

} // namespace zklock::cli
