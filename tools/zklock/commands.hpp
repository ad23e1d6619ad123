// The zklock command-line tool: one function per subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace zklock::cli {

/// Exit statuses shared by the subcommands (flock(1) and consul lock conventions).
inline constexpr int exit_not_acquired = 75;  ///< EX_TEMPFAIL: lock not acquired, command not run
inline constexpr int exit_lock_lost = 76;     ///< the lock was lost while the command ran
inline constexpr int exit_usage = 64;         ///< EX_USAGE: bad arguments or lock path
inline constexpr int exit_unavailable = 69;   ///< EX_UNAVAILABLE: no server reachable

/// Adds `-c/--connect HOSTS` (default $ZKLOCK_CONNECT, else 127.0.0.1:2181) to `cmd`.
void add_connect_option(CLI::App& cmd, std::string& connect);
/// The default connect string: $ZKLOCK_CONNECT, else 127.0.0.1:2181.
std::string default_connect();

/// Each registers its subcommand on `app`; the callback it sets stores the exit
/// status in `exit_code`.
void add_run(CLI::App& app, int& exit_code);
void add_status(CLI::App& app, int& exit_code);
void add_server(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code);
void add_demo(CLI::App& app, int& exit_code);

} // namespace zklock::cli
