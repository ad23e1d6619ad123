// The zklock command-line tool: one function per subcommand.
#pragma once

#include "common.hpp"

#include <CLI/CLI.hpp>

namespace zklock::cli {

/// Each registers its subcommand on `app`; the callback it sets stores the exit
/// status in `exit_code`.
void add_run(CLI::App& app, int& exit_code);
void add_status(CLI::App& app, int& exit_code);
void add_server(CLI::App& app, int& exit_code);
void add_demo(CLI::App& app, int& exit_code);
void add_elect(CLI::App& app, int& exit_code);
void add_fence(CLI::App& app, int& exit_code);
/// `zklock write OP...`: a guarded transaction under $ZKLOCK_LOCK_NODE (write.cpp).
void add_write(CLI::App& app, int& exit_code);
/// `zklock revoke TARGET...`: ask a lock's holders (or a node) to let go (revoke.cpp).
void add_revoke(CLI::App& app, int& exit_code);
/// `zklock lock LOCK_PATH`: hold it until SIGINT, SIGTERM or SIGHUP (run.cpp).
void add_lock(CLI::App& app, int& exit_code);

/// The commands of the zklock-bench program beside zklock: `zklock bench`
/// and `zklock chaos` (zklock_bench.cpp). Listed with the others; run, they
/// replace zklock with `zklock-bench bench ARGS...` (or `chaos ARGS...`).
void add_bench(CLI::App& app, int& exit_code);
void add_chaos(CLI::App& app, int& exit_code);
/// The commands add_bench() and add_chaos() registered.
bool is_bench_command(const std::string& name);
/// Replaces this process with zklock-bench, found beside zklock, given `words`
/// ("bench", then the arguments). Returns only when that fails: then it says
/// where it looked and returns exit_unavailable.
int run_zklock_bench(const std::vector<std::string>& words);

} // namespace zklock::cli
