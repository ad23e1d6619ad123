// Counters kept per lock object, and the queue as a status query sees it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace zklock {

/// Counters of one lock object since it was constructed. The bench reads them.
struct lock_stats {
    std::uint64_t acquisitions = 0;          ///< successful acquires
    std::uint64_t watch_notifications = 0;   ///< watch events that woke this contender while waiting
    std::uint64_t get_children_calls = 0;    ///< getChildren requests sent while acquiring
    std::chrono::nanoseconds total_wait{0};  ///< time from acquire start to grant, summed
    std::chrono::nanoseconds total_hold{0};  ///< time from grant to release, summed
};

/// One node in a lock's queue (see contenders()).
struct contender {
    std::string node;                 ///< child name, e.g. "_c_<guid>-lock-0000000007"
    std::size_t position = 0;         ///< 0 = holder
    std::int64_t fencing_token = 0;   ///< czxid of the node
    std::int64_t owner_session = 0;   ///< ephemeral owner's session id (0: a persistent node)
    std::int64_t created_ms = 0;      ///< ctime, milliseconds since the epoch (server clock)
    std::string data;                 ///< the node's data (MutexOptions::node_data: "<host>:<pid>" by default)
    bool shared = false;              ///< a reader: of a SharedMutex, a kazoo ReadLock or a Curator read lock
    /// Who created the node, from its name: "zklock" (also Curator's InterProcessMutex
    /// and LeaderSelector, which use the same name), "curator", "kazoo", "go-zookeeper",
    /// "c-recipe" (ZooKeeper's C lock recipe) or "lock-suffix" (another `...lock-<seq>`
    /// name). docs/interop.md lists the names.
    std::string dialect = "zklock";
    /// Not ephemeral (owner_session 0): no session end will ever delete it, so it
    /// blocks everyone behind it until someone deletes it by hand (a node forged
    /// or left by a tool; zklock never creates one). Acquires that wait only for
    /// such nodes fail with errc::blocked_by_persistent_node.
    bool persistent = false;
};

} // namespace zklock
