// What a test can do to a process: crash it, freeze it, bring it back.
//
// One interface for every process the fixtures start: the servers
// (ZooKeeperServer, RedisServer, PostgresServer, through ServerProcess) and a
// client or any other program (ChildProcess). A fault schedule can hold them
// all in one list:
//
//     std::vector<testing::FaultableProcess*> targets{&ensemble.node(0), &redis, &client};
//     targets[i]->pause_for(3s);  // SIGSTOP now, SIGCONT in 3 s by itself
//
// Needs nothing but the right to signal the process (it is this process's
// child, or runs as the same user). No root.
#pragma once

#include <chrono>
#include <string>

#include <sys/types.h>

namespace zklock::testing {

/// A process a test can kill, pause and restart.
///
/// Thread-safety: as the implementing class (none of them is thread-safe: use
/// one object from one thread). The timed resume of pause_for() runs on a
/// thread of its own and touches nothing but the paused processes' signals.
class FaultableProcess {
public:
    virtual ~FaultableProcess() = default;

    /// What the process is, for messages: "ZooKeeper server on 127.0.0.1:2181",
    /// "process 1234 (redis-cli)".
    [[nodiscard]] virtual std::string name() const = 0;
    /// The process id (for a server: its main process), -1 when it does not run.
    [[nodiscard]] virtual pid_t pid() const noexcept = 0;
    /// True while the process exists (a paused process counts as running).
    [[nodiscard]] virtual bool running() = 0;
    /// True between pause() (or pause_for()) and the matching resume: resume(),
    /// the end of pause_for()'s duration, kill9(), restart().
    [[nodiscard]] virtual bool paused() const noexcept = 0;

    /// kill -9: SIGKILL to the process and everything it started (its process
    /// group; for PostgreSQL every server process), then reaps it. A crash: no
    /// shutdown code runs. Returns the wait status of the (main) process
    /// (waitpid(2)), or -1 when it was not running.
    virtual int kill9() = 0;
    /// SIGSTOP to the process and everything it started; returns once the
    /// kernel reports it stopped. A frozen process keeps its sockets open but
    /// answers nothing. Returns false when it does not run. A second pause()
    /// does nothing (and returns true).
    virtual bool pause() = 0;
    /// SIGCONT to what pause() stopped; cancels a pending pause_for() resume.
    /// Returns false when there is nothing to resume.
    virtual bool resume() = 0;
    /// pause(), then SIGCONT after `duration` by itself (from a thread of its
    /// own), without the caller's help. paused() turns false when that
    /// happened. A resume(), kill9(), stop or restart before then cancels the
    /// pending resume (resume() resumes at once). Returns pause()'s result.
    virtual bool pause_for(std::chrono::milliseconds duration) = 0;
    /// Stops the process if it runs (see the class: a server stops gracefully,
    /// a ChildProcess gets SIGTERM then SIGKILL) and starts it again the same
    /// way: same command line, and for a server the same port and data.
    /// Returns once a server serves again. The pid changes.
    virtual void restart() = 0;
};

}  // namespace zklock::testing
