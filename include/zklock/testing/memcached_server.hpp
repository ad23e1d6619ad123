// Real memcached servers for tests (the memcached comparison backend).
//
// Each server is a `memcached` child process (ChildProcess: own process group,
// killed by the kernel if the test process dies; a ServerProcess, whose
// kill9(), pause(), pause_for(), restart() are its faults) listening on
// 127.0.0.1 only (`-l 127.0.0.1 -p PORT -U 0`: TCP, no UDP). A constructor
// returns only once the server answers `version`, so tests never need to sleep
// before connecting. memcached keeps nothing on disk: every restart() starts
// empty. Run as root, the server drops to RunAs user (memcached -u).
//
// Requirements: memcached (the Debian `memcached` package). Library:
// zklock::testing_backends (its probe is a plain socket: no libmemcached).
//
// Thread-safety: MemcachedServer is not thread-safe; use each object from one
// thread. Create it on a thread that outlives it (see ChildProcess: the kernel
// kills the server when the creating thread exits). memcached_command() is
// safe to call concurrently.
#pragma once

#include <zklock/testing/backends_export.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "zklock/testing/process.hpp"
#include "zklock/testing/server_process.hpp"

namespace zklock::testing {

/// Options of a MemcachedServer.
struct MemcachedServerOptions {
    /// Port on 127.0.0.1. Default 0: a free port chosen at start.
    std::uint16_t port = 0;
    /// The memcached executable, looked up in PATH unless it contains '/'.
    /// Default "memcached".
    std::string memcached = "memcached";
    /// The user the server runs as when the tests run as root (memcached
    /// refuses root without -u). Default "memcache" (the Debian package's).
    std::string run_as = "memcache";
    /// How long a start (constructor, restart()) may take before it fails. Default 10 s.
    std::chrono::milliseconds start_timeout{10000};
    /// Extra command-line arguments appended last (e.g. {"-m", "8"}). Default: none.
    std::vector<std::string> extra_args;
};

/// Sends one text-protocol command (without its final "\r\n"; a storage
/// command's data block follows its line after "\r\n", e.g.
/// "set k 0 60 3\r\nabc") to 127.0.0.1:port and returns the raw reply up to
/// its end ("END\r\n" after a get, else the first line), e.g. "DELETED\r\n",
/// "NOT_FOUND\r\n", "VALUE k 0 3\r\nabc\r\nEND\r\n".
/// Throws std::system_error: errc::timed_out when no complete reply comes
/// within timeout, errc::connection_refused when nothing listens,
/// errc::connection_reset when the server closes first; std::invalid_argument
/// for an empty command or one that ends in "\r\n".
ZKLOCK_TESTING_BACKENDS_EXPORT std::string memcached_command(std::uint16_t port, const std::string& line,
                                                             std::chrono::milliseconds timeout);

/// One memcached process.
///
/// Errors: the constructor and restart() throw std::runtime_error when the
/// server does not answer `version` within the start timeout or its process
/// exits; the message holds the exit status and the last 20 lines of its log.
/// std::system_error for failures to create files or start memcached.
///
/// Destruction stops the server (as stop()) and removes its temp dir.
///
/// Thread-safety: not thread-safe; use from one thread.
class ZKLOCK_TESTING_BACKENDS_EXPORT MemcachedServer : public ServerProcess {
public:
    /// Starts a memcached server on loopback and waits until it answers `version` (throws otherwise).
    explicit MemcachedServer(MemcachedServerOptions options = {});
    ~MemcachedServer() override;

    MemcachedServer(const MemcachedServer&) = delete;
    MemcachedServer& operator=(const MemcachedServer&) = delete;
    MemcachedServer(MemcachedServer&&) = delete;
    MemcachedServer& operator=(MemcachedServer&&) = delete;

    // port(), connect_string() ("127.0.0.1:PORT"), pid(), running(), paused(),
    // log_path(), log_tail(), stop(), restart() and the faults kill9(),
    // pause(), resume(), pause_for() come from ServerProcess. stop() kills the
    // process (SIGKILL): memcached keeps nothing a graceful stop would save, and
    // it acts on SIGTERM only at its next one-second clock tick. A restarted
    // server is empty.

    /// memcached_command(port(), line, timeout): the raw reply.
    std::string command(const std::string& line, std::chrono::milliseconds timeout = std::chrono::seconds(5));
    /// The server's version ("1.6.18"), from `version`.
    [[nodiscard]] std::string version();

private:
    void spawn() override;
    [[nodiscard]] bool serving(std::chrono::milliseconds timeout) override;
    void stop_process() override;

    TempDir temp_dir_;
    MemcachedServerOptions options_;
};

}  // namespace zklock::testing
