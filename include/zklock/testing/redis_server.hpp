// Real Redis servers for tests (the Redis comparison backend and Redlock).
//
// Each server is a `redis-server` child process (ChildProcess: own process
// group, killed by the kernel if the test process dies; a ServerProcess, whose
// kill9(), pause(), pause_for(), restart() are its faults) listening on
// 127.0.0.1 only, with its working directory in its own temp dir. A
// constructor returns only once the server answers PING with PONG, so tests
// never need to sleep before connecting. Several servers may run at once
// (Redlock needs five); each gets its own free port and directory.
//
// Authentication: with RedisServerOptions::password (requirepass) or ::users
// (ACL users, Redis 6+) clients must AUTH. The secrets go into a redis.conf of
// mode 0600 in the server's temp dir, which redis-server reads as its first
// argument: no secret is on any command line. The fixture's own probes and
// command() authenticate as admin() (the default user with the password, else
// the first ACL user).
//
// Requirements: redis-server (the Debian `redis-server` package). Library:
// zklock::testing_backends (its probes use hiredis).
//
// Thread-safety: RedisServer is not thread-safe; use each object from one
// thread. Create it on a thread that outlives it (see ChildProcess: the kernel
// kills the server when the creating thread exits). redis_command() is safe
// to call concurrently.
#pragma once

#include <zklock/testing/backends_export.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "zklock/testing/process.hpp"
#include "zklock/testing/server_process.hpp"

namespace zklock::testing {

/// A Redis ACL user (Redis 6+): a name and its password.
struct RedisUser {
    /// The ACL user's name.
    std::string name;
    /// Its password (written to a 0600 file, never on an argv).
    std::string password;
};

/// Who a connection authenticates as: AUTH password (user empty: the default
/// user), AUTH user password, or nothing (password empty).
struct RedisCredentials {
    /// The user to AUTH as (empty: the default user).
    std::string user;
    /// The password (never printed).
    std::string password;
};

/// Options of a RedisServer.
struct RedisServerOptions {
    /// Port on 127.0.0.1. Default 0: a free port chosen at start.
    std::uint16_t port = 0;
    /// false (default): no RDB snapshots and no AOF (`--save "" --appendonly
    /// no`), so every restart() or kill9() + restart() starts empty.
    /// true: `--appendonly yes --appendfsync always` plus the default save
    /// points, so data survives restart() and even kill9().
    bool persistence = false;
    /// The redis-server executable, looked up in PATH unless it contains '/'.
    /// Default "redis-server".
    std::string redis_server = "redis-server";
    /// How long a start (constructor, restart()) may take before it fails. Default 10 s.
    std::chrono::milliseconds start_timeout{10000};
    /// Extra command-line arguments appended last, so they override the
    /// generated ones (e.g. {"--maxmemory", "10mb"}). Default: none.
    std::vector<std::string> extra_args;
    /// requirepass: the default user needs this password (AUTH password).
    /// Default empty: the default user needs none (unless `users` is set).
    std::string password;
    /// ACL users, each allowed every command, key and channel
    /// (`user NAME on >PASSWORD ~* &* +@all`). When set and `password` is empty,
    /// the default user is switched off: only these users get in. Default: none.
    std::vector<RedisUser> users;
};

/// Sends one command (an array of bulk strings) to 127.0.0.1:port and returns
/// the complete raw RESP reply, e.g. "+PONG\r\n", "$-1\r\n" (nil),
/// "$3\r\nbar\r\n", "-ERR ...\r\n" (an error reply is returned, not thrown).
/// Throws std::system_error: errc::timed_out when the exchange does not
/// finish within timeout (a paused server accepts the connection but never
/// answers), errc::connection_refused when nothing listens,
/// errc::connection_reset when the server closes before a full reply, other
/// errno values for other failures; std::invalid_argument for empty args.
ZKLOCK_TESTING_BACKENDS_EXPORT std::string redis_command(std::uint16_t port, const std::vector<std::string>& args,
                          std::chrono::milliseconds timeout);
/// Same, on a connection that first authenticates `as` (nothing when its
/// password is empty); a refused AUTH returns the AUTH's error reply (e.g.
/// "-WRONGPASS ...\r\n") without sending `args`.
ZKLOCK_TESTING_BACKENDS_EXPORT std::string redis_command(std::uint16_t port, const std::vector<std::string>& args,
                          std::chrono::milliseconds timeout, const RedisCredentials& as);

/// Length of the first complete RESP2/RESP3 reply at the start of data, or
/// nullopt when data holds only part of one. Throws std::runtime_error for
/// bytes that are not RESP.
ZKLOCK_TESTING_BACKENDS_EXPORT std::optional<std::size_t> resp_reply_length(std::string_view data);

/// One redis-server process.
///
/// Errors: the constructor and restart() throw std::runtime_error when the
/// server does not answer PONG within the start timeout or its process exits;
/// the message holds the exit status and the last 20 lines of log_path().
/// std::system_error for failures to create files or start redis-server.
///
/// Destruction stops the server (as stop()) and removes its temp dir.
///
/// Thread-safety: not thread-safe; use from one thread.
class ZKLOCK_TESTING_BACKENDS_EXPORT RedisServer : public ServerProcess {
public:
    /// Starts a Redis server on loopback and waits until it answers PING (throws otherwise).
    explicit RedisServer(RedisServerOptions options = {});
    ~RedisServer() override;

    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;
    RedisServer(RedisServer&&) = delete;
    RedisServer& operator=(RedisServer&&) = delete;

    // port(), connect_string() ("127.0.0.1:PORT"), pid() (-1 when stopped),
    // running(), paused(), log_path(), log_tail(), and the faults kill9(),
    // pause(), resume(), pause_for() come from ServerProcess. A frozen server
    // accepts TCP connections but answers nothing.

    /// "127.0.0.1".
    [[nodiscard]] std::string host() const;

    /// Graceful stop: the SHUTDOWN command (with persistence Redis saves
    /// first), then SIGTERM if it has not exited within 1 s (at once for a
    /// paused server), SIGKILL if still alive 5 s later; reaps the process.
    /// Afterwards the port refuses connections. No-op when stopped.
    using ServerProcess::stop;
    /// Stops the server if it runs (gracefully), then starts it again with the
    /// same port, options and directory; returns once it answers PONG.
    /// Without persistence the restarted server is empty.
    using ServerProcess::restart;

    /// redis_command(port(), args, timeout, admin()): the raw RESP reply.
    std::string command(const std::vector<std::string>& args,
                        std::chrono::milliseconds timeout = std::chrono::seconds(5));
    /// The server's version ("7.0.15"), from INFO server; "" when it does not say.
    [[nodiscard]] std::string version();
    /// Who command() and the fixture's probes authenticate as: the default user
    /// with options.password, else the first of options.users, else nobody.
    [[nodiscard]] RedisCredentials admin() const;
    /// The file that holds the generated configuration (mode 0600).
    [[nodiscard]] const std::filesystem::path& config_path() const noexcept;

    /// The directory the server runs in (--dir: dump.rdb, appendonlydir) and
    /// that holds the log.
    [[nodiscard]] const std::filesystem::path& directory() const noexcept;

private:
    void write_config();
    void spawn() override;
    [[nodiscard]] bool serving(std::chrono::milliseconds timeout) override;
    void stop_process() override;

    TempDir temp_dir_;
    std::filesystem::path config_path_;
    RedisServerOptions options_;
};

}  // namespace zklock::testing
