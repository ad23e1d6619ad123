// Counters kept per lock object, and the queue as a status query sees it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace zklock {

/// What one lock object has done since it was constructed, the same for every
/// backend (Mutex::stats(), Lock::stats(), ...), to compare how they wait; zklock
/// bench reads them. Safe to read from any thread while the lock runs.
struct lock_stats {
    std::uint64_t acquisitions = 0;   ///< grants
    std::uint64_t attempts = 0;       ///< times the client asked the server whether it may hold the lock
                                      ///< (ZooKeeper: getChildren listings; Redis: SET NX rounds, one per
                                      ///< Redlock round; PostgreSQL: lock statements; flock: flock(2) calls)
    std::uint64_t wakeups = 0;        ///< server pushes that woke this waiter to look again (ZooKeeper watch
                                      ///< events, Redis pub/sub messages, PostgreSQL NOTIFYs); 0 where the
                                      ///< server hands the lock over itself (advisory and row locks)
    std::uint64_t timer_retries = 0;  ///< retries started by the waiter's own backoff timer (polling)
    std::chrono::nanoseconds total_wait{0};  ///< from acquire start to grant, summed over the grants
    std::chrono::nanoseconds total_hold{0};  ///< from grant to release or loss, summed over ended holds
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
