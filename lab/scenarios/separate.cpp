// bench separate --backend B: K clients on K different locks, what the server
// sustains when nobody waits (a backend comparison: it needs --backend).
#include "scenarios/scenario.hpp"

namespace zklock::cli {

const scenario& separate_scenario() {
    static const scenario s{
        .name = "separate",
        .description = "K clients on K locks on each --backend: what a server sustains when nobody waits",
        .takes = {.clients = true, .backends = true, .servers = true},
        .clients_text = "clients, each on a lock of its own",
    };
    return s;
}

} // namespace zklock::cli
