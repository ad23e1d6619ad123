// bench waiters: --waiters queued on one lock over --sessions sessions, then
// drained: the queue's cost in time and memory (runs/scale.cpp).
#include "scenarios/scenario.hpp"

#include "command.hpp"

namespace zklock::cli {
namespace {

void add_waiters_options(CLI::App& cmd, bench_cli& c, CLI::Option*) {
    auto& o = c.zookeeper;
    cmd.add_option("--waiters", o.waiters, "waiters queued on one lock")
        ->check(CLI::Range(2, 1000000))
        ->capture_default_str();
    cmd.add_option("--sessions", o.sessions, "sessions the waiters are spread over")
        ->check(CLI::Range(1, 10000))
        ->capture_default_str();
}

} // namespace

const scenario& waiters_scenario() {
    static const scenario s{
        .name = "waiters",
        .description = "--waiters queued on one lock, then drained",
        .takes = {.ops = false, .mutex = true},
        .add_own_options = add_waiters_options,
    };
    return s;
}

} // namespace zklock::cli
