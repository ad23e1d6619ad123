// bench uncontended: one client, one lock, acquire + release; beside it the C
// client's floor (the least a lock cycle costs) and, asked for, Curator's and
// kazoo's; with --backend the same on each backend.
#include "scenarios/scenario.hpp"

namespace zklock::cli {

const scenario& uncontended_scenario() {
    static const scenario s{
        .name = "uncontended",
        .description = "One client, one lock: the latency of acquire + release (with --backend: on each backend)",
        .takes = {.mutex = true, .confirm_unlock = true, .floor = true, .floor_requeue = true, .requeue = true, .rounds = true, .curator = true,
                  .kazoo = true, .scripts = true, .ensemble = true, .backends = true, .servers = true},
    };
    return s;
}

} // namespace zklock::cli
