// bench semaphore: K clients on a Semaphore of --permits (runs/recipes.cpp).
#include "scenarios/scenario.hpp"

#include "command.hpp"

namespace zklock::cli {
namespace {

void add_semaphore_options(CLI::App& cmd, bench_cli& c, CLI::Option*) {
    cmd.add_option("--permits", c.zookeeper.permits, "permits of the semaphore (recipe semaphore)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
}

} // namespace

const scenario& semaphore_scenario() {
    static const scenario s{
        .name = "semaphore",
        .description = "K clients on a semaphore of --permits permits",
        .form = flag_form::recipe,
        .takes = {.clients = true},
        .clients_text = "clients of the semaphore",
        .add_own_options = add_semaphore_options,
    };
    return s;
}

} // namespace zklock::cli
