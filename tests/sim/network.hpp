// The simulated network between the C client's handles and the server: what
// the runner sets (latencies, how a connection loss treats requests in
// flight) and the faults it injects. Implemented with the simulated C client
// in fake_zookeeper.cpp.
#pragma once

#include "world.hpp"
#include "zk_model.hpp"

#include <cstdint>

namespace zklock::sim {

struct network_options {
    nanos min_latency = 100'000;    // one way
    nanos max_latency = 2'000'000;
    nanos min_reconnect = ms(2);
    nanos max_reconnect = ms(40);
    double in_flight_commits = 0.5;  // a request in flight at a connection loss still reaches the server
};

/// Installs the simulated C client on `w` and `server` for the length of a run.
void attach_network(world& w, zk_server& server, network_options options);
void detach_network();

/// Faults on the connection of the handle that has session `session` (0: none such yet).
/// Closes the connection now (the client notices after a one-way latency).
void drop_connection(std::int64_t session);
/// Nothing passes either way until `until`.
void partition(std::int64_t session, nanos until);
/// The connection closes right after the server applies the session's next
/// request (not a ping), before its reply.
void drop_after_next_request(std::int64_t session);
/// Every connection from now on goes to server `server` (0: the leader; -1:
/// the one the seed picks, as the schedules have it).
void route_connections(int server);

} // namespace zklock::sim
