// bench locks: --locks held at once through one Session, beside the C
// client's same burst on one handle and one lock's cycle (runs/scale.cpp).
#include "scenarios/scenario.hpp"

#include "command.hpp"

namespace zklock::cli {
namespace {

void add_locks_options(CLI::App& cmd, bench_cli& c, CLI::Option*) {
    auto& o = c.zookeeper;
    cmd.add_option("--locks", o.locks, "locks held at once through one Session")
        ->check(CLI::Range(1, 10000000))
        ->capture_default_str();
    cmd.add_flag("--on-session", o.on_session,
                 "make, take and release the locks in a handler on the Session's executor (as an "
                 "Asio program running there would) instead of from the bench's own thread");
}

} // namespace

const scenario& locks_scenario() {
    static const scenario s{
        .name = "locks",
        .description = "--locks held at once through one Session",
        .takes = {.mutex = true, .floor = true},
        .ops_text = "one lock's cycles, measured beside the burst",
        .add_own_options = add_locks_options,
    };
    return s;
}

} // namespace zklock::cli
