// Lock sets (MultiMutex): pure decisions, no server involved.
//
// A MultiMutex creates one node, `_c_<guid>-lock-<seq>`, in every lock
// directory of its set with one `multi` transaction: the nodes share the guid
// and the transaction's zxid. In each queue the node follows the mutex rule
// (detail::decide with one permit: every contender ahead blocks it); the set is
// held when its node is first in every queue. Being first in a queue lasts
// until our node goes (sequence numbers only grow), so the queues are granted
// one by one and the set is held when the last one is.
#pragma once

#include "fsm/check_result.hpp"
#include "fsm/lock_node.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

/// Checks the lock paths of a set before any server call: at least one; each
/// a valid lock path (validate_lock_path); none twice; none under another
/// ("/locks/a" and "/locks/a/b": the inner lock's directory would be a child of
/// the outer lock's queue). errc::invalid_path with a sentence naming the path.
check_result validate_lock_set(const std::vector<std::string>& paths);

/// What a set's contender does after listing its queues.
struct set_decision {
    bool found = false;                  ///< our node is in every listing
    std::vector<std::size_t> missing;    ///< the queues whose listing lacks our node
    bool acquired = false;               ///< first in every queue: the set is held
    std::vector<queue_decision> queues;  ///< per queue, the mutex rule (position, whom to watch)
};

/// Applies the mutex rule to our node `my_names[i]` in `listings[i]` (the
/// children of the i-th lock directory), for every queue of the set.
set_decision decide_set(const std::vector<std::vector<std::string>>& listings,
                                      const std::vector<std::string>& my_names);

/// Where a set stands whose transaction's reply was lost: the multi either
/// committed (our guid is in every directory) or not (in none). `partial`
/// means someone deleted some of our nodes since: what is left must go.
struct set_recovery {
    enum class outcome { none, all, partial };
    outcome found = outcome::none;
    std::vector<std::optional<std::string>> names;  ///< per directory, the child carrying the guid
};

/// Looks for `guid` in each directory's listing (find_by_guid).
set_recovery find_set_by_guid(const std::vector<std::vector<std::string>>& listings,
                                            std::string_view guid);

/// The line that starts the list of a set's lock paths in its nodes' data.
inline constexpr std::string_view set_data_marker = "\nzklock lock set:";

/// The data of each node of a set: the user's `data`, then set_data_marker and
/// every lock path of the set on a line of its own, so that a status query on
/// one path can name the others (lock paths hold no control characters).
std::string set_node_data(std::string_view data, const std::vector<std::string>& paths);

/// A node's data split back: the user's part and the set's lock paths (none
/// for a node that is not a set's).
struct set_node_contents {
    std::string data;
    std::vector<std::string> paths;
};
set_node_contents parse_set_node_data(std::string_view data);

} // namespace zklock::detail
