// zklock::node_names: how zklock spells the queue nodes it creates, so that a
// peer library's recipe on the same path counts them as contenders.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zklock {

/// The naming a recipe writes its nodes in (MutexOptions::names,
/// LeaderElectionOptions::names). zklock reads every peer's names whatever this
/// says; this only decides whether a peer sees zklock's node. `<seq>` is the
/// sequence the server appends; `<uuid>` a random UUID, `<32 hex>` one without dashes.
///
/// | recipe                | zklock (default)        | curator                   | kazoo                    |
/// |-----------------------|-------------------------|---------------------------|--------------------------|
/// | Mutex, RecursiveMutex | `_c_<uuid>-lock-<seq>`  | `_c_<uuid>-lock-<seq>`    | `<32 hex>__lock__<seq>`  |
/// | SharedMutex writer    | `_c_<uuid>-write-<seq>` | `_c_<uuid>-__WRIT__<seq>` | `<32 hex>__lock__<seq>`  |
/// | SharedMutex reader    | `_c_<uuid>-read-<seq>`  | `_c_<uuid>-__READ__<seq>` | `<32 hex>__rlock__<seq>` |
/// | LeaderElection        | `_c_<uuid>-lock-<seq>`  | `_c_<uuid>-latch-<seq>`   | `<32 hex>__lock__<seq>`  |
/// | Semaphore             | `_c_<uuid>-lock-<seq>`  | refused                   | refused                  |
///
/// - `curator`: what Apache Curator's InterProcessMutex, InterProcessReadWriteLock
///   and LeaderLatch create and count (LeaderSelector uses InterProcessMutex's
///   names, which zklock's default already is).
/// - `kazoo`: what kazoo's Lock, WriteLock, ReadLock and Election create and
///   count without `extra_lock_patterns`.
/// - A Semaphore writes only zklock's names: no peer semaphore queues on lock
///   nodes. Any other choice is refused with errc::invalid_argument.
///
/// The node's data is the same in every naming (MutexOptions::node_data, the
/// election's participant id), and so is how zklock queues: by sequence, in
/// serial-number order (docs/interop.md says what that means past the wrap).
enum class node_names : std::uint8_t { zklock, curator, kazoo };

/// "zklock", "curator" or "kazoo".
constexpr std::string_view to_string(node_names n) noexcept {
    switch (n) {
    case node_names::zklock: return "zklock";
    case node_names::curator: return "curator";
    case node_names::kazoo: return "kazoo";
    }
    return "unknown";
}

/// The naming called `text` ("zklock", "curator", "kazoo"); nullopt for any other text.
constexpr std::optional<node_names> parse_node_names(std::string_view text) noexcept {
    for (const auto n : {node_names::zklock, node_names::curator, node_names::kazoo})
        if (text == to_string(n)) return n;
    return std::nullopt;
}

} // namespace zklock
