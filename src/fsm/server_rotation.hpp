// Where the C client's next connect goes after a refusal (pure; unit-tested).
//
// After a failed connect the ZooKeeper C client 3.8 moves two places along its
// server list: handle_error() advances it, then zookeeper_interest() advances
// it again before the next connect. With an even number of addresses it then
// tries only half of them, round after round, and never reaches the others,
// even once they listen (a two-server connect string retries one server
// forever). The Session reads the list's order through zoo_cycle_next_server()
// and zoo_get_current_server(), and sets the position so that the next connect
// goes to an address that has not refused yet in this round.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace zklock::detail {

/// `ring`: the C client's addresses in its order, ring[0] its current
/// position (the next connect goes to the address after the position). How
/// many places to move the position so the next connect goes to the first
/// address after ring[0], in ring order, that is not in `refused`; nullopt
/// when the ring is empty or every address in it has refused.
std::optional<std::size_t> steps_to_untried(const std::vector<std::string>& ring, const std::set<std::string>& refused);

} // namespace zklock::detail
