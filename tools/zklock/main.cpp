#include "command_line.hpp"
#include "commands.hpp"
#include "descriptors.hpp"
#include "help.hpp"

#include <zklock/version.hpp>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    // Before anything opens a descriptor: what zklock inherited is what CMD may inherit.
    zklock::cli::snapshot_inherited_descriptors();
    const auto arguments = zklock::cli::take_arguments(argc, argv);
    // bench and chaos are zklock-bench's, with every word after them as given
    // (as git runs git-foo): before CLI11 reads any of them.
    if (argc > 1 && zklock::cli::is_bench_command(arguments[1]))
        return zklock::cli::run_zklock_bench({arguments.begin() + 1, arguments.end()});
    CLI::App app{"zklock: distributed locks on ZooKeeper"};
    app.name("zklock");  // in usage lines and in the man page, whatever path ran it
    app.require_subcommand(1);
    app.set_version_flag("-V,--version", "zklock " ZKLOCK_VERSION_STRING, "Print zklock's version and exit");
    app.footer("zklock help COMMAND (or zklock COMMAND --help) describes one command.");
    int exit_code = 0;
    zklock::cli::add_run(app, exit_code);
    zklock::cli::add_lock(app, exit_code);
    zklock::cli::add_status(app, exit_code);
    zklock::cli::add_server(app, exit_code);
    zklock::cli::add_bench(app, exit_code);
    zklock::cli::add_demo(app, exit_code);
    zklock::cli::add_elect(app, exit_code);
    zklock::cli::add_fence(app, exit_code);
    zklock::cli::add_write(app, exit_code);
    zklock::cli::add_revoke(app, exit_code);
    zklock::cli::add_chaos(app, exit_code);
    zklock::cli::add_help(app, exit_code,
                          {"Describe zklock, or one command: zklock help run, zklock help fence check",
                           zklock::cli::is_bench_command,
                           [](const std::vector<std::string>& words) {
                               std::vector<std::string> help{"help"};
                               help.insert(help.end(), words.begin(), words.end());
                               return zklock::cli::run_zklock_bench(help);
                           }});
    if (argc == 1) {
        // A bare `zklock`, as a bare git does: the usage, here `zklock help`'s,
        // on stderr (it is an error: no command), and the bad-arguments status.
        std::cerr << zklock::cli::overview(app);
        return zklock::cli::exit_usage;
    }
    return zklock::cli::parse_and_run(app, arguments, exit_code);
}
