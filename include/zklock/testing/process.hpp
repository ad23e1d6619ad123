// Child processes, free loopback ports and temporary directories for tests.
//
// These are the building blocks of the real-server fixtures
// (zookeeper_server.hpp). They depend on nothing but C++20 and POSIX/Linux.
//
// Thread-safety: none of these types is thread-safe; use one object from one
// thread at a time. The free functions are safe to call concurrently.
#pragma once

#include <zklock/testing/export.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "zklock/testing/faultable_process.hpp"

namespace zklock::testing {

namespace detail {
class TimedResume;
}

/// How ChildProcess starts its child.
struct ChildProcessOptions {
    /// Variables added to (or overriding in) the parent's environment. Default: none.
    std::vector<std::pair<std::string, std::string>> env;
    /// Working directory of the child. Default (empty): the parent's.
    std::filesystem::path working_dir;
    /// File that receives the child's stdout and stderr (created if missing,
    /// appended to otherwise). Default (empty): the parent's stdout and stderr.
    /// (The child is in its own process group, so it does not get the
    /// terminal's Ctrl-C; the parent decides when it stops.)
    std::filesystem::path output_path;
};

/// One child process, started on construction and killed on destruction.
///
/// The child runs in its own process group (pgid == pid), with stdin from
/// /dev/null, all signal
/// dispositions reset to their defaults, an empty signal mask, every file
/// descriptor above 2 closed on exec, and PR_SET_PDEATHSIG(SIGKILL): when the
/// parent dies, even by SIGKILL or abort(), the kernel kills the child.
/// Caveat of the kernel: the death signal fires when the *thread* that
/// created the child exits, so create ChildProcess objects from a thread that
/// lives as long as they do (the main thread, typically).
///
/// Signals go to the whole process group. After the child has been reaped
/// (by stop(), kill9(), wait_exit() or running() seeing it exit) no signal is
/// ever sent again, so a recycled pid is never hit. Reaping needs SIGCHLD
/// not to be ignored (SIG_IGN makes the kernel reap on its own; the status
/// is then reported as -1).
///
/// As a FaultableProcess it can be paused for a while (pause_for()) and
/// restarted with the same command line and options (restart()).
///
/// Thread-safety: not thread-safe; use from one thread.
class ZKLOCK_TESTING_EXPORT ChildProcess : public FaultableProcess {
public:
    /// Starts argv[0] with arguments argv[1..]. argv[0] is looked up in PATH
    /// when it contains no '/'.
    /// Throws std::invalid_argument if argv is empty, std::system_error if
    /// the program cannot be found, the output file cannot be opened, the
    /// working directory cannot be entered, or exec fails (the errno of the
    /// failing step is reported; the half-started child is reaped).
    explicit ChildProcess(std::vector<std::string> argv, ChildProcessOptions options = {});

    /// Kills the process group with SIGKILL and reaps the child. Never throws.
    ~ChildProcess() override;

    /// Transfers ownership of the child; the source no longer owns any.
    ChildProcess(ChildProcess&& other) noexcept;
    /// Kills and reaps the current child, then takes over other's.
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    /// The child's pid (also its process group id); -1 for a moved-from object.
    /// Still returned after the child has been reaped (unlike a server's pid()).
    [[nodiscard]] pid_t pid() const noexcept override;

    /// "process PID (PROGRAM)".
    [[nodiscard]] std::string name() const override;

    /// True while the child has not exited. Reaps it if it has exited
    /// (a stopped child counts as running).
    [[nodiscard]] bool running() override;

    /// Sends sig to the child's process group. Returns false (and sends
    /// nothing) if the child has already been reaped or kill() fails.
    bool signal(int sig) noexcept;

    /// SIGTERM (followed by SIGCONT, so a paused child sees it), waits up to
    /// grace for the exit, then SIGKILL. Reaps the child and returns its
    /// wait status (see waitpid(2): WIFEXITED, WTERMSIG, ...). Returns the
    /// cached status if the child was already reaped.
    int stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

    /// SIGKILL to the process group, then reaps. Returns the wait status
    /// (the cached one when already reaped).
    int kill9() override;

    /// SIGSTOP to the process group; returns once the kernel reports the
    /// child stopped (every thread of it, waitpid WUNTRACED), or after 5 s.
    /// A second pause() without resume() does nothing; a pause() during a
    /// pause_for() cancels its timed resume (the child stays stopped until
    /// resume()). Returns false if the child was already reaped, exited
    /// meanwhile, or kill() failed.
    bool pause() noexcept override;
    /// SIGCONT to the process group (cancels a pending pause_for() resume).
    /// Returns false if the child was already reaped or kill() failed.
    bool resume() noexcept override;
    /// pause(), then SIGCONT to the process group after `duration` from a
    /// thread of its own (see FaultableProcess::pause_for()).
    bool pause_for(std::chrono::milliseconds duration) override;
    /// True between pause() and resume() or the end of a pause_for().
    [[nodiscard]] bool paused() const noexcept override;
    /// stop() (SIGTERM, SIGKILL after 5 s) if the child runs, then starts the
    /// same argv with the same options again: a new pid and process group.
    /// Throws as the constructor.
    void restart() override;

    /// Waits up to timeout for the child to exit and reaps it.
    /// Returns the wait status (see waitpid(2)), or nullopt on timeout.
    /// A zero timeout only checks.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout);

    /// The wait status once the child has been reaped, otherwise nullopt.
    [[nodiscard]] std::optional<int> exit_status() const noexcept;

private:
    void spawn();
    bool try_reap() noexcept;
    void release() noexcept;
    void cancel_timed_resume() noexcept;

    std::vector<std::string> argv_;
    ChildProcessOptions options_;
    pid_t pid_ = -1;
    int pidfd_ = -1;
    std::optional<int> status_;
    bool stopped_ = false;
    std::unique_ptr<detail::TimedResume> timed_resume_;
};

/// Renders a waitpid(2) status as text: "exited with 0", "killed by signal 9".
ZKLOCK_TESTING_EXPORT std::string describe_wait_status(int status);

/// A TCP port on 127.0.0.1 that was free a moment ago: binds 127.0.0.1:0,
/// reads the port the kernel chose, closes the socket. Another process may
/// take the port before the caller binds it; the window is small.
/// Throws std::system_error if no socket can be bound.
ZKLOCK_TESTING_EXPORT std::uint16_t free_loopback_port();

/// n distinct free loopback ports (all sockets are held open until every
/// port is chosen, so no port repeats). Same caveat and errors as
/// free_loopback_port().
ZKLOCK_TESTING_EXPORT std::vector<std::uint16_t> free_loopback_ports(std::size_t n);

/// A fresh directory made with mkdtemp under $TMPDIR (or /tmp when unset or
/// empty), removed with everything in it on destruction unless keep() was
/// called.
///
/// Thread-safety: not thread-safe; use from one thread.
class ZKLOCK_TESTING_EXPORT TempDir {
public:
    /// Creates "<tmp>/<prefix>XXXXXX". Throws std::system_error on failure.
    explicit TempDir(const std::string& prefix = "zklock-");
    /// Removes the directory recursively unless kept. Never throws; errors
    /// during removal are ignored.
    ~TempDir();

    /// Takes over `other`'s directory (removed once, by the last owner).
    TempDir(TempDir&& other) noexcept;
    /// Removes this object's directory (unless kept), then takes over `other`'s.
    TempDir& operator=(TempDir&& other) noexcept;
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    /// The absolute path of the directory; empty for a moved-from object.
    [[nodiscard]] const std::filesystem::path& path() const noexcept;

    /// Leaves the directory in place on destruction.
    void keep(bool keep = true) noexcept;
    /// True when the directory stays after the object is destroyed.
    [[nodiscard]] bool kept() const noexcept;

private:
    void remove() noexcept;

    std::filesystem::path path_;
    bool keep_ = false;
};

}  // namespace zklock::testing
