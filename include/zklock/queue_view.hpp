// A lock's queue as `zklock status` reads it: which contenders hold now under
// the recipe's rule, and what a contender's node data says. Pure functions of a
// listing (list_queue(), QueueWatch), for tools that show or watch a queue.
#pragma once

#include <zklock/export.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/queue_lock.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace zklock {

/// Which contenders of `listing` hold the lock now, by the rule of the recipe
/// on the path: with `permits` above 1 (a Semaphore's count, stored_permits())
/// the first `permits` of its `...lock-` nodes; with a reader in the queue (a
/// SharedMutex, or a peer's read-write lock) the readers ahead of the first
/// writer, or that writer when it is first; otherwise the first contender.
/// One flag per contender, in queue order. Thread-safe.
ZKLOCK_EXPORT std::vector<bool> queue_holders(const queue_listing& listing, std::size_t permits = 1);

/// A contender's node data split into what its owner gave (MutexOptions::
/// node_data, "<host>:<pid>" by default) and, for a lock set's node
/// (MultiMutex), every lock path of its set.
struct contender_data {
    std::string data;                   ///< the owner's data, without the set's list of paths
    std::vector<std::string> lock_set;  ///< the set's lock paths; empty for a node that is not a set's
};

/// Splits `node_data` (contender::data) as contender_data. Never fails: data
/// of another shape is all the owner's. Thread-safe.
ZKLOCK_EXPORT contender_data parse_contender_data(std::string_view node_data);

/// True when `name` (a child's name, without its directory) is a contender's
/// node in a dialect zklock reads (its own, Curator's, kazoo's, go-zookeeper's,
/// the C recipe's; docs/interop.md), i.e. one a list_queue() would show in the
/// queue. Thread-safe.
ZKLOCK_EXPORT bool is_contender_node(std::string_view name);

} // namespace zklock
