// bench contended: K clients on one lock, each acquiring again right after its
// release: acquisitions/s, the wait, the handoff, fairness, wake-ups per grant;
// beside it the C client's handoff floor and, asked for, Curator's and
// kazoo's; with --backend the same on each backend.
#include "scenarios/scenario.hpp"

namespace zklock::cli {

const scenario& contended_scenario() {
    static const scenario s{
        .name = "contended",
        .description = "K clients on one lock: acquisitions/s, wait, handoff and fairness (with --backend: on each)",
        .takes = {.clients = true, .mutex = true, .confirm_unlock = true, .one_thread = true, .floor = true,
                  .floor_release_proof = true, .floor_requeue = true, .requeue = true, .rounds = true, .curator = true, .kazoo = true, .scripts = true,
                  .ensemble = true, .backends = true, .servers = true},
        .clients_text = "sessions contending on one lock",
    };
    return s;
}

} // namespace zklock::cli
