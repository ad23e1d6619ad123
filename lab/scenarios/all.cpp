// bench all: uncontended, then contended; with --backend, separate too.
#include "scenarios/scenario.hpp"

namespace zklock::cli {

const scenario& all_scenario() {
    static const scenario s{
        .name = "all",
        .description = "uncontended, then contended (with --backend: separate too, on each backend)",
        .takes = {.clients = true, .mutex = true, .confirm_unlock = true, .one_thread = true, .floor = true,
                  .floor_release_proof = true, .floor_requeue = true, .requeue = true, .rounds = true, .curator = true, .kazoo = true, .scripts = true,
                  .ensemble = true, .backends = true, .servers = true},
        .clients_text = "sessions contending on one lock (contended; with --backend also separate)",
    };
    return s;
}

} // namespace zklock::cli
