#include "commands.hpp"
#include "descriptors.hpp"

#include <zklock/error.hpp>

#include <iostream>

int main(int argc, char** argv) {
    // Before anything opens a descriptor: what zklock inherited is what CMD may inherit.
    zklock::cli::snapshot_inherited_descriptors();
    CLI::App app{"zklock: distributed locks on ZooKeeper"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "zklock 0.1.0");
    int exit_code = 0;
    zklock::cli::add_run(app, exit_code);
    zklock::cli::add_status(app, exit_code);
    zklock::cli::add_server(app, exit_code);
    zklock::cli::add_bench(app, exit_code);
    zklock::cli::add_demo(app, exit_code);
    zklock::cli::add_elect(app, exit_code);
    try {
        app.parse(argc, argv);
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
