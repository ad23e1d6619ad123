// bench rwlock: readers and writers on a SharedMutex, --read-ratio of the
// operations reads (runs/recipes.cpp).
#include "scenarios/scenario.hpp"

#include "command.hpp"

namespace zklock::cli {
namespace {

void add_rwlock_options(CLI::App& cmd, bench_cli& c, CLI::Option*) {
    cmd.add_option("--read-ratio", c.zookeeper.read_ratio, "share of reads among the operations (recipe rwlock)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
}

} // namespace

const scenario& rwlock_scenario() {
    static const scenario s{
        .name = "rwlock",
        .description = "Readers and writers on one read-write lock, --read-ratio of them reads",
        .form = flag_form::recipe,
        .takes = {.clients = true},
        .clients_text = "clients, each reading or writing",
        .add_own_options = add_rwlock_options,
    };
    return s;
}

} // namespace zklock::cli
