// zklock-bench: zklock's bench and chaos soak, a program of its own so that
// zklock links none of it (nor the lock backends' client libraries). zklock
// runs it for `zklock bench ARGS` and `zklock chaos ARGS`, as
// `zklock-bench bench ARGS` (argv[0] "zklock": it then names itself zklock).
// Run directly, `zklock-bench SCENARIO ...` and `zklock-bench --scenario X ...`
// are `zklock-bench bench ...`.
#include "bench.hpp"
#include "command.hpp"
#include "command_line.hpp"
#include "common.hpp"
#include "help.hpp"

#include <zklock/version.hpp>

#include <string>
#include <vector>

namespace {

// The first word that is zklock-bench's own: a command or a top-level flag.
// Anything else starts the arguments of `bench`.
bool is_program_word(const std::string& word) {
    for (const char* own : {"bench", "chaos", "help", "bench-safety-client", "-h", "--help", "-V", "--version"})
        if (word == own) return true;
    return false;
}

} // namespace

int main(int argc, char** argv) {
    auto arguments = zklock::cli::take_arguments(argc, argv);
    const auto name = zklock::cli::program_name(argc > 0 ? argv[0] : "");
    if (arguments.size() < 2 || !is_program_word(arguments[1]))
        arguments.insert(arguments.begin() + (arguments.empty() ? 0 : 1), "bench");
    CLI::App app{"zklock-bench: zklock's bench (latency, throughput, safety under faults) and chaos soak"};
    app.name(name);  // "zklock" when zklock runs it: `zklock bench ...` in usage lines and the man page
    app.require_subcommand(1);
    app.set_version_flag("-V,--version", name + " " ZKLOCK_VERSION_STRING, "Print the version and exit");
    app.footer(name + " help COMMAND (or " + name + " COMMAND --help) describes one command.");
    int exit_code = 0;
    zklock::cli::add_bench(app, exit_code);
    zklock::cli::add_chaos(app, exit_code);
    zklock::cli::add_help(app, exit_code,
                          {"Describe zklock-bench, or one command: zklock-bench help bench, zklock-bench help bench "
                           "waiters",
                           {},
                           {}});
    return zklock::cli::parse_and_run(app, arguments, exit_code);
}
