#include "commands.hpp"
#include "descriptors.hpp"

#include "support/secrets.hpp"
#include <zklock/error.hpp>
#include <zklock/version.hpp>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

// Every local user can read /proc/PID/cmdline. A secret typed on the command
// line (`--postgres '... password=...'`, `--redis redis://u:pw@h`) is taken out
// of it at once: the options are parsed from a copy, and the process's own
// argument strings are overwritten with their redacted text.
std::vector<std::string> take_arguments(int argc, char** argv) {
    std::vector<std::string> copy(argv, argv + argc);
    for (int i = 1; i < argc; ++i) {
        const auto redacted = zklock::detail::redact_secrets(argv[i]);
        if (redacted == argv[i]) continue;
        const std::size_t n = std::strlen(argv[i]);
        std::memset(argv[i], 0, n);
        std::memcpy(argv[i], redacted.data(), std::min(n, redacted.size()));  // a cut "***" still hides it
    }
    return copy;
}

} // namespace

int main(int argc, char** argv) {
    // Before anything opens a descriptor: what zklock inherited is what CMD may inherit.
    zklock::cli::snapshot_inherited_descriptors();
    const auto arguments = take_arguments(argc, argv);
    std::vector<const char*> args;
    for (const auto& a : arguments) args.push_back(a.c_str());
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
    zklock::cli::add_chaos(app, exit_code);
    zklock::cli::add_help(app, exit_code);
    if (argc == 1) {
        // A bare `zklock`, as a bare git does: the usage, here `zklock help`'s,
        // on stderr (it is an error: no command), and the bad-arguments status.
        std::cerr << zklock::cli::overview(app);
        return zklock::cli::exit_usage;
    }
    try {
        app.parse(argc, args.data());
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : zklock::cli::exit_usage;
    } catch (const zklock::error& e) {
        zklock::cli::notice(e.what());
        return zklock::cli::exit_status_for(e.code());
    } catch (const std::exception& e) {
        zklock::cli::notice(e.what());
        return 1;
    }
    return exit_code;
}
