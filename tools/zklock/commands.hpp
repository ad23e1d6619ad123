// The zklock command-line tool: one function per subcommand.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/session.hpp>

#include <CLI/CLI.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace zklock::cli {

/// Exit statuses shared by the subcommands (flock(1) and consul lock conventions).
inline constexpr int exit_not_acquired = 75;  ///< EX_TEMPFAIL: lock not acquired, command not run
inline constexpr int exit_lock_lost = 76;     ///< the lock was lost while the command ran
inline constexpr int exit_usage = 64;         ///< EX_USAGE: bad arguments or lock path
inline constexpr int exit_unavailable = 69;   ///< EX_UNAVAILABLE: no server reachable
inline constexpr int exit_noperm = 77;        ///< EX_NOPERM: not authorized, authentication refused

/// Adds `-c/--connect HOSTS` (default $ZKLOCK_CONNECT, else 127.0.0.1:2181) to `cmd`.
void add_connect_option(CLI::App& cmd, std::string& connect);
/// The default connect string: $ZKLOCK_CONNECT, else 127.0.0.1:2181.
std::string default_connect();

// --- credentials and ACLs (--auth-file, $ZKLOCK_AUTH_FILE, --acl) -----------------------

/// The environment variable naming the auth file when --auth-file is not given.
/// zklock removes it from the environment of the commands it runs.
inline constexpr const char* auth_file_variable = "ZKLOCK_AUTH_FILE";

struct auth_options {
    std::string file;              ///< --auth-file; empty: $ZKLOCK_AUTH_FILE, if set
    std::vector<std::string> acl;  ///< --acl entries (zkCli syntax), joined with ','
};

/// What --auth-file and --acl give. Secrets stay in here: nothing prints them.
struct credentials {
    std::vector<auth_entry> zookeeper;  ///< every line of the auth file but redis: ones
    std::string redis_user;             ///< from a `redis:USER:PASSWORD` line; empty: none
    std::string redis_password;
    std::optional<acl_list> acl;        ///< --acl; none: the open default
};

/// Adds --auth-file FILE and, with `with_acl`, --acl ACL to `cmd`.
void add_auth_options(CLI::App& cmd, auth_options& o, bool with_acl = true);
/// Reads the auth file (lines `digest:user:password` for ZooKeeper,
/// `redis:user:password` for Redis; refused when group or others may read it)
/// and parses --acl. On bad input prints "zklock: ..." (never a secret) and
/// returns nullopt: the command exits with exit_usage.
std::optional<credentials> load_credentials(const auth_options& o);
/// Puts the ZooKeeper part of `c` into `s` (auth, and the ACL when given).
void apply(const credentials& c, SessionOptions& s);

/// The exit status for an error from the server or the library: exit_noperm for
/// not authorized / authentication refused / an insecure ACL, exit_usage for
/// bad input, exit_unavailable otherwise.
int exit_status_for(const std::error_code& ec);

/// Each registers its subcommand on `app`; the callback it sets stores the exit
/// status in `exit_code`.
void add_run(CLI::App& app, int& exit_code);
void add_status(CLI::App& app, int& exit_code);
void add_server(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code);
void add_demo(CLI::App& app, int& exit_code);
void add_elect(CLI::App& app, int& exit_code);

// --- running CMD (run, elect; defined in run.cpp) -------------------------------------

/// Writes "zklock: <what>" to stderr.
void notice(const std::string& what);
/// "exited with N" / "killed by signal S" for a waitpid status.
std::string describe_status(int wait_status);
/// The status a shell reports for a waitpid status: the exit code, or 128+N for signal N.
int shell_status(int wait_status);
/// The stop signals zklock handles (SIGINT, SIGTERM, SIGHUP): those not ignored on
/// entry. Under nohup, or as a background job of a non-interactive shell, they
/// stay ignored, for zklock and (inherited through exec) for CMD.
std::vector<int> stop_signals();

/// CMD as zklock's child: fork/exec with extra environment variables (the child
/// asks for PR_SET_PDEATHSIG, so it does not outlive zklock and with it the
/// lock's session), waited on with a pidfd on `io`; stopped with a signal, then
/// SIGKILL after the grace period. Used from io's thread only.
class command_child {
public:
    using environment = std::vector<std::pair<std::string, std::string>>;

    command_child(boost::asio::io_context& io, std::chrono::milliseconds grace, std::vector<int> handled_signals);
    ~command_child();
    command_child(const command_child&) = delete;
    command_child& operator=(const command_child&) = delete;

    /// Starts `command` with `env` added to zklock's environment; `on_exit(wait_status)`
    /// runs on io when it has ended and been reaped. Returns 0, or the errno of the
    /// failed fork or exec (ENOENT: not found); on_exit is then never called.
    int start(const std::vector<std::string>& command, const environment& env, std::function<void(int)> on_exit);
    /// True from start() until on_exit is called.
    bool running() const noexcept { return pid_ > 0; }
    /// Sends `sig` to CMD (not its process group, which is zklock's); the first call
    /// per command arms SIGKILL after the grace period. Does nothing when not running.
    void stop(int sig);

private:
    void wait_for_exit();
    void exited_with(int wait_status);

    boost::asio::io_context& io_;
    std::chrono::milliseconds grace_;
    std::vector<int> handled_signals_;
    boost::asio::steady_timer kill_timer_;
    boost::asio::posix::stream_descriptor wait_;
    std::function<void(int)> on_exit_;
    pid_t pid_ = -1;
    bool kill_armed_ = false;
};

} // namespace zklock::cli
