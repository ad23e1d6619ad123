// bench election: LeaderElection's failover, handoffs from a resigning leader
// to the next (runs/recipes.cpp).
#include "scenarios/scenario.hpp"

namespace zklock::cli {

const scenario& election_scenario() {
    static const scenario s{
        .name = "election",
        .description = "Leader election: the failover after the leader resigns",
        .form = flag_form::recipe,
        .takes = {.clients = true},
        .ops_text = "handoffs to measure",
        .clients_text = "participants in the election",
    };
    return s;
}

} // namespace zklock::cli
