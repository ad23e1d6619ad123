// bench mixed: K zklock, K Curator and K kazoo clients on one lock for
// --duration, each holding for --hold: every kind takes turns, and no zklock
// hold overlaps another's (runs/mixed.cpp).
#include "scenarios/scenario.hpp"

#include "command.hpp"

namespace zklock::cli {
namespace {

void add_mixed_options(CLI::App& cmd, bench_cli& c, CLI::Option*) {
    auto& o = c.zookeeper;
    cmd.add_option("--duration", o.duration_text,
                   std::string("how long the clients contend") + duration_forms)
        ->type_name("TIME")
        ->capture_default_str()
        ->check(duration_check(false));
    cmd.add_option("--hold", o.hold_text,
                   "how long every client holds the lock each time (0, 1ms, ...: a sleep, so that "
                   "holds of clients that do not wait for each other are seen to overlap)")
        ->type_name("TIME")
        ->capture_default_str()
        ->check(duration_check(true));
}

} // namespace

const scenario& mixed_scenario() {
    static const scenario s{
        .name = "mixed",
        .description = "K zklock, K Curator and K kazoo clients on one lock for --duration",
        .takes = {.ops = false, .clients = true, .scripts = true},
        .clients_text = "clients of each kind",
        .add_own_options = add_mixed_options,
    };
    return s;
}

} // namespace zklock::cli
