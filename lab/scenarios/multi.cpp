// bench multi: K clients each locking 2 or 3 of --lock-paths M paths, with
// MultiMutex, with single locks sorted and in the caller's order, and with
// --curator InterProcessMultiLock sorted and unsorted (runs/multi.cpp).
#include "scenarios/scenario.hpp"

#include "command.hpp"

namespace zklock::cli {
namespace {

void add_multi_options(CLI::App& cmd, bench_cli& c, CLI::Option*) {
    auto& o = c.zookeeper;
    cmd.add_option("--lock-paths", o.lock_paths, "lock paths the clients take subsets of")
        ->check(CLI::Range(2, 1000))
        ->capture_default_str();
    add_duration_option(cmd, "--acquire-timeout", o.acquire_timeout_ms,
                        "an acquisition not granted within TIME gives up (counted as a timeout: "
                        "a deadlock, or a wait that long)",
                        {std::chrono::milliseconds(1), std::chrono::milliseconds(3600000)});
}

} // namespace

const scenario& multi_scenario() {
    static const scenario s{
        .name = "multi",
        .description = "K clients each locking 2 or 3 of --lock-paths M paths: MultiMutex against single locks",
        .takes = {.clients = true, .curator = true, .scripts = true},
        .clients_text = "clients, each taking subsets of the paths",
        .add_own_options = add_multi_options,
    };
    return s;
}

} // namespace zklock::cli
