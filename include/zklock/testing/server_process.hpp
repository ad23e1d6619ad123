// The part every real-server fixture shares: one server process on a loopback
// port, started and probed until it serves, stopped, crashed, frozen and
// restarted. ZooKeeperServer, RedisServer, PostgresServer, MariaDBServer and
// MemcachedServer derive from it; each says how to start its server, how to ask
// it whether it serves, and (when the default does not fit) how to stop or
// signal it, how to prepare its files, and which user runs it.
#pragma once

#include <zklock/testing/export.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "zklock/testing/faultable_process.hpp"
#include "zklock/testing/process.hpp"

namespace zklock::testing {

namespace detail {
class ServerAccount;
class TimedResume;
}

/// One server process listening on 127.0.0.1:port(), owned through a
/// ChildProcess (own process group, killed by the kernel if the test process
/// dies).
///
/// The faults (FaultableProcess): kill9() is a crash, pause() a freeze (the
/// server keeps its connections and answers nothing, its clients' sessions or
/// leases time out), pause_for() a freeze that ends by itself, restart() a
/// graceful stop and a start on the same port with the same data. None needs
/// root.
///
/// Errors: restart() throws std::runtime_error when the server does not serve
/// within the start timeout or its process exits; the message holds the exit
/// status and the last 20 lines of log_path(). std::system_error when the
/// program cannot be started.
///
/// Thread-safety: not thread-safe; use from one thread. Create it on a thread
/// that outlives it (see ChildProcess: the kernel kills the server when the
/// creating thread exits).
class ZKLOCK_TESTING_EXPORT ServerProcess : public FaultableProcess {
public:
    /// Does not stop the server: each fixture's destructor does (the stop hooks
    /// are virtual). Never throws.
    ~ServerProcess() override;

    ServerProcess(const ServerProcess&) = delete;
    ServerProcess& operator=(const ServerProcess&) = delete;
    ServerProcess(ServerProcess&&) = delete;
    ServerProcess& operator=(ServerProcess&&) = delete;

    /// "<kind> on 127.0.0.1:PORT", e.g. "Redis server on 127.0.0.1:6379".
    [[nodiscard]] std::string name() const override;
    /// The port on 127.0.0.1; the same across restart().
    [[nodiscard]] std::uint16_t port() const noexcept;
    /// "127.0.0.1:PORT".
    [[nodiscard]] std::string connect_string() const;
    /// The server's (main) pid, or -1 when it is stopped.
    [[nodiscard]] pid_t pid() const noexcept override;
    /// True while the process exists (paused counts as running).
    [[nodiscard]] bool running() override;
    /// True between pause() and resume() (or the end of pause_for(), stop,
    /// kill9, restart).
    [[nodiscard]] bool paused() const noexcept override;

    /// Graceful stop (each server its own way; SIGKILL when it takes too
    /// long), reaping the process. Afterwards the port refuses connections.
    /// No-op when stopped.
    void stop();
    /// SIGKILL to every process of the server and reap: a crash. No-op (returns
    /// -1) when stopped; otherwise the main process's wait status.
    int kill9() override;
    /// Stops the server if it runs (gracefully), then starts it again with the
    /// same port, options and data; returns once it serves.
    void restart() override;
    /// SIGSTOP to every process of the server: it accepts TCP connections but
    /// answers nothing. No-op (true) when already paused; false when stopped.
    bool pause() override;
    /// SIGCONT to what pause() stopped; cancels a pending pause_for() resume.
    bool resume() override;
    /// pause(), and SIGCONT after `duration` by itself (FaultableProcess).
    bool pause_for(std::chrono::milliseconds duration) override;

    /// The file that holds the server's output (its log).
    [[nodiscard]] const std::filesystem::path& log_path() const noexcept;
    /// The last n lines of log_path() ("" if it cannot be read).
    [[nodiscard]] std::string log_tail(std::size_t lines = 20) const;

protected:
    /// kind: "ZooKeeper server", "Redis server", ... (for name() and errors).
    /// The derived constructor calls configure() before anything else.
    ServerProcess(std::string kind, std::chrono::milliseconds start_timeout);
    /// The port, the log file, and where the server keeps its files (shown in
    /// start failures).
    void configure(std::uint16_t port, std::filesystem::path log_path, std::filesystem::path location);

    /// Starts the server: launch(argv, options). The only required hook.
    virtual void spawn() = 0;
    /// One readiness probe: does the server serve requests now?
    [[nodiscard]] virtual bool serving(std::chrono::milliseconds timeout) = 0;
    /// Graceful stop of a running server, reaping it. Default: SIGTERM, SIGKILL
    /// after 5 s (ChildProcess::stop()).
    virtual void stop_process();
    /// SIGKILL to every process of the server. Default: the process group.
    virtual void kill_process() noexcept;
    /// SIGSTOP to every process of the server. Default: the process group.
    virtual bool pause_process() noexcept;
    /// What pause_process() stopped, for SIGCONT (kill(2) targets: a pid, or a
    /// negative process group), in the order to resume. Default: the group.
    [[nodiscard]] virtual std::vector<pid_t> resume_targets() const;

    /// When this process runs as root, the server's programs (launch(),
    /// run_setup()) run as `os_user` through `setpriv --reuid --regid
    /// --init-groups --pdeathsig keep` (setpriv execs, so the child's pid is
    /// the program's), and `directory` becomes that user's (mode 0755);
    /// otherwise nothing changes. For servers that refuse to run as root.
    /// Throws std::runtime_error when there is no such user, std::system_error
    /// when the directory cannot be given to it.
    void run_as(const std::string& os_user, const std::filesystem::path& directory);
    /// The user run_as() switched to, for files made for the server;
    /// uid_t(-1) when its programs run as this process's own.
    [[nodiscard]] uid_t server_uid() const noexcept;
    /// The group run_as() switched to; gid_t(-1) when its programs run as
    /// this process's own.
    [[nodiscard]] gid_t server_gid() const noexcept;
    /// Runs a program that prepares the server's files (initdb, ...), as the
    /// server's user, until it exits: fail_start(), showing
    /// options.output_path and naming the program `what`, when it does not
    /// exit by `deadline` (or within the start timeout) or exits other than 0.
    void run_setup(const std::string& what, std::vector<std::string> argv, ChildProcessOptions options,
                   std::chrono::steady_clock::time_point deadline);
    /// Starts the process (replacing a reaped one), as the server's user.
    /// Throws as ChildProcess.
    void launch(std::vector<std::string> argv, ChildProcessOptions options);
    /// A stop_process() by signal: `sig` to the server's process group (a
    /// paused server resumed first), kill_process() when it has not exited
    /// after `grace`.
    void stop_by_signal(int sig, std::chrono::milliseconds grace);
    /// Polls serving() until it holds; fail_start() when the process exits or
    /// the deadline passes.
    void wait_until_serving(std::chrono::steady_clock::time_point deadline);
    /// kill_process() and throws std::runtime_error: "<name> (<where>) failed
    /// to start: <why>" with the last lines of `log` (default log_path()).
    [[noreturn]] void fail_start(const std::string& why, const std::filesystem::path& log = {});
    /// How long start() waits for the server to be ready.
    [[nodiscard]] std::chrono::milliseconds start_timeout() const noexcept { return start_timeout_; }
    /// The running process (empty when stopped).
    [[nodiscard]] ChildProcess* process() noexcept { return process_ ? &*process_ : nullptr; }
    /// For derived classes that signal more than the process group.
    [[nodiscard]] bool has_process() const noexcept { return process_.has_value(); }
    /// Cancels a resume scheduled by pause_for().
    void cancel_timed_resume() noexcept;

private:
    std::string kind_;
    std::uint16_t port_ = 0;
    std::filesystem::path log_path_;
    std::filesystem::path location_;
    std::chrono::milliseconds start_timeout_;
    std::optional<ChildProcess> process_;
    bool paused_ = false;
    std::unique_ptr<detail::TimedResume> timed_resume_;
    std::unique_ptr<detail::ServerAccount> account_;  // run_as()'s
};

}  // namespace zklock::testing
