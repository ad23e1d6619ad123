// Lock node names and queue decisions: pure functions, no server involved.
//
// A contender's node is `<dir>/_c_<guid>-<marker><sequence>`, e.g.
// `_c_7f9c...-lock-0000000042`. The `_c_<guid>-` prefix is the protected-create
// tag (the same shape Apache Curator uses, so zklock and Curator clients can
// queue on one lock); the server appends the sequence, formatted "%010d" from
// the parent's signed 32-bit counter, which wraps past 2147483647 to negative
// numbers ("-2147483648").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

/// The marker before the sequence number of a mutex node.
inline constexpr std::string_view lock_marker = "lock-";
/// The protected-create tag that starts every contender node.
inline constexpr std::string_view protected_tag = "_c_";

/// A random (version 4) UUID in its 36-character text form.
std::string new_guid();

/// The name zklock asks the server to create, without the sequence:
/// `_c_<guid>-<marker>`.
std::string node_name_prefix(std::string_view guid, std::string_view marker = lock_marker);

/// The sequence number of a child named `...<marker><sequence>`, where the
/// sequence is what the server appends: ten digits, or a '-' and ten digits
/// after the counter wrapped. nullopt for a child that is not a lock node.
std::optional<std::int32_t> parse_sequence(std::string_view child, std::string_view marker = lock_marker);

/// Serial-number order on the parent's 32-bit counter: true when `a` was
/// issued before `b`, also across the wrap from 2147483647 to -2147483648.
/// Valid while the queue spans fewer than 2^31 sequence numbers.
constexpr bool sequence_before(std::int32_t a, std::int32_t b) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b)) < 0;
}

/// One lock node of a listing.
struct lock_node {
    std::string name;
    std::int32_t sequence = 0;
    friend bool operator==(const lock_node&, const lock_node&) = default;
};

/// The lock nodes of a getChildren listing in queue order (serial-number order
/// of their sequences). Children without `marker` and a valid sequence are ignored.
std::vector<lock_node> sorted_lock_nodes(const std::vector<std::string>& children,
                                         std::string_view marker = lock_marker);

/// The child whose name carries `guid` (the node a protected create made),
/// if the listing holds one.
std::optional<std::string> find_by_guid(const std::vector<std::string>& children, std::string_view guid);

/// What a contender does after a listing.
struct queue_decision {
    bool found = false;                       ///< our node is in the listing
    bool acquired = false;                    ///< we hold a lease now
    std::size_t position = 0;                 ///< our place in the queue, 0 = first
    std::optional<std::string> watch;         ///< the node to watch when not acquired
    bool watch_is_last_blocker = false;       ///< its deletion alone grants us a lease
};

/// The queue rule for `permits` concurrent holders (1 = mutex): the first
/// `permits` nodes hold a lease; the node at position p >= permits watches the
/// node at p - permits only, so each release wakes exactly one waiter.
queue_decision decide(const std::vector<lock_node>& sorted, std::string_view my_name, std::size_t permits = 1);

} // namespace zklock::detail
