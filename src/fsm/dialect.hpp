// Peer dialects: the contender node names other ZooKeeper lock libraries
// create, recognised so that zklock queues behind them. Pure functions.
//
// Every name ends in the sequence the server appends ("%010d" of the parent's
// signed 32-bit counter). What comes before it says who made the node:
//
//   dialect        name                                   recipe (kind)
//   zklock         _c_<uuid>-lock-<seq>                   Mutex, Semaphore, LeaderElection (exclusive);
//                                                         Curator's InterProcessMutex and LeaderSelector
//                                                         write the very same name
//                  _c_<uuid>-write-<seq>, -read-<seq>     SharedMutex (writer exclusive, reader shared)
//   curator        _c_<uuid>-latch-<seq>                  LeaderLatch (exclusive: one leader)
//                  _c_<uuid>-__WRIT__<seq>, -__READ__     InterProcessReadWriteLock (exclusive, shared)
//                  lock-<seq> (no protection tag)         InterProcessMutex without protection
//   kazoo          <32 hex>__lock__<seq>                  Lock, WriteLock, Election (exclusive)
//                  <32 hex>__rlock__<seq>                 ReadLock (shared)
//   go-zookeeper   _c_<32 hex>-lock-<seq>                 zk.Lock (exclusive)
//   c-recipe       x-<16 hex session id>-<seq>            ZooKeeper's src/recipes/lock (exclusive)
//   lock-suffix    any other ...lock-<seq>                read as a lock node since zklock's first version
//
// The match is on the text before the sequence (as kazoo and Curator match),
// so a name recognised here is one some peer's recipe would count.
#pragma once


#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

/// Who created a contender node (see the table above).
enum class dialect : std::uint8_t { zklock, curator, kazoo, go_zookeeper, c_recipe, lock_suffix };

/// A writer / mutex / leader holds alone; a reader shares with readers.
enum class contender_kind : std::uint8_t { exclusive, shared };

/// What a child's name says about it.
struct recognised_node {
    std::int32_t sequence = 0;
    detail::dialect dialect = dialect::zklock;
    contender_kind kind = contender_kind::exclusive;
    /// A `...lock-<seq>` name: what zklock's Mutex, Semaphore and LeaderElection
    /// create. A semaphore counts these as permit holders; any other contender
    /// ahead of a semaphore waiter blocks it outright.
    bool lock_form = false;
    friend bool operator==(const recognised_node&, const recognised_node&) = default;
};

/// The contender a child's name denotes, or nullopt for a child no dialect
/// recognises (a foreign child: the queue rule ignores it).
std::optional<recognised_node> recognise(std::string_view child);

/// "zklock", "curator", "kazoo", "go-zookeeper", "c-recipe", "lock-suffix".
std::string_view dialect_name(dialect d) noexcept;

/// "exclusive" or "shared".
std::string_view kind_name(contender_kind k) noexcept;

/// Peer semaphores keep another layout under their path, which zklock's
/// Semaphore cannot share (each side would admit its own permits):
///   Apache Curator InterProcessSemaphoreV2: children `leases` and `locks`;
///   kazoo Semaphore: lease children named by a bare 32-hex uuid (no sequence),
///   and the permit count as bare decimal digits in the path's data.
/// What the listing `children` shows of such a peer, in words; nullopt when nothing.
std::optional<std::string> foreign_semaphore_children(const std::vector<std::string>& children);
/// The same for the path's data (zklock stores "permits=<n>").
std::optional<std::string> foreign_semaphore_data(std::string_view data);

} // namespace zklock::detail
