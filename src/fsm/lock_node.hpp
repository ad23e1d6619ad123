// Lock node names and queue decisions: pure functions, no server involved.
//
// A contender's node is `<dir>/_c_<guid>-<marker><sequence>`, e.g.
// `_c_7f9c...-lock-0000000042`. The `_c_<guid>-` prefix is the protected-create
// tag (the same shape Apache Curator uses, so zklock and Curator clients can
// queue on one lock); the server appends the sequence, formatted "%010d" from
// the parent's signed 32-bit counter, which wraps past 2147483647 to negative
// numbers ("-2147483648").
//
// The queue is made of every contender a peer library's recipe would count
// (fsm/dialect.hpp): Curator's, kazoo's, go-zookeeper's and the C recipe's
// nodes queue with zklock's, ordered by sequence. zklock writes the names above
// unless told to write a peer's (zklock::node_names, fsm/node_form.hpp).
#pragma once

#include "fsm/dialect.hpp"
#include "fsm/node_form.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

/// The marker before the sequence number of a mutex, semaphore or election node.
inline constexpr std::string_view lock_marker = "lock-";
/// The markers of a read-write lock's writer and reader nodes.
inline constexpr std::string_view write_marker = "write-";
inline constexpr std::string_view read_marker = "read-";
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
/// Where the last `marker` that may start a sequence (one within the last
/// marker.size() + 11 characters) is in `child`, or npos: the marker
/// parse_sequence() reads the sequence after.
std::size_t sequence_marker_at(std::string_view child, std::string_view marker = lock_marker) noexcept;

/// Serial-number order on the parent's 32-bit counter: true when `a` was
/// issued before `b`, also across the wrap from 2147483647 to -2147483648.
/// Valid while the queue spans fewer than 2^31 sequence numbers.
constexpr bool sequence_before(std::int32_t a, std::int32_t b) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b)) < 0;
}

/// One contender node of a listing.
struct lock_node {
    std::string name;
    std::int32_t sequence = 0;
    bool shared = false;  ///< a reader of a read-write lock (zklock's, kazoo's or Curator's)
    detail::dialect dialect = dialect::zklock;
    /// A `...lock-<seq>` name (see recognised_node::lock_form).
    bool lock_form = true;
    friend bool operator==(const lock_node&, const lock_node&) = default;
};

/// Every contender of a getChildren listing, of every dialect zklock reads, in
/// queue order (serial-number order of their sequences; a total order even for
/// sequences spread over more than 2^31, which only hand-written names make).
/// Children no dialect recognises are left out: they are not in the queue.
std::vector<lock_node> sorted_contenders(const std::vector<std::string>& children);

/// A contender of a listing that names its child instead of copying it: a
/// decision reads a listing of N children, and copying every name (a
/// 20,000-waiter queue's newcomer lists 20,000) was an allocation per child.
struct node_view {
    std::string_view name;
    std::int32_t sequence = 0;
    bool shared = false;
    detail::dialect dialect = dialect::zklock;
    bool lock_form = true;
};

/// A getChildren listing as contenders decide on it. Its queue order is worked
/// out on the first decision and kept for the next: a session's shared listing
/// (fsm/listing_batches.hpp) answers every contender of the session that waited
/// for it, hundreds at once in a long queue, and each would otherwise recognise
/// and sort every child again. Names `children`, which must outlive it; one
/// thread at a time.
class children_listing {
public:
    children_listing(const std::vector<std::string>& children) noexcept : children_(&children) {}  // NOLINT: implicit
    children_listing(std::vector<std::string>&&) = delete;  // it would name a temporary
    const std::vector<std::string>& children() const noexcept { return *children_; }
    /// The contenders in queue order (sorted_contenders' order, as views).
    const std::vector<node_view>& sorted() const;
    /// Our node `my_name` in sorted(), found by its sequence (a binary
    /// search), or sorted().end() when it is not there.
    std::vector<node_view>::const_iterator find(std::string_view my_name) const;
    /// Their sequences in the same order, made once and shared by whoever
    /// keeps them past the listing (lock-delay's queue_ahead).
    const std::shared_ptr<const std::vector<std::int32_t>>& sequences() const;

private:
    const std::vector<std::string>* children_;
    mutable std::optional<std::vector<node_view>> sorted_;
    mutable std::shared_ptr<const std::vector<std::int32_t>> sequences_;
};

/// The child whose name carries `guid` (the node a protected create made),
/// if the listing holds one.
std::optional<std::string> find_by_guid(const std::vector<std::string>& children, std::string_view guid);

/// What a contender does after a listing.
struct queue_decision {
    bool found = false;                       ///< our node is in the listing
    bool acquired = false;                    ///< we hold a lease now
    std::size_t position = 0;                 ///< our place in the queue, 0 = first
    std::vector<std::string> watch;           ///< the nodes to watch when not acquired
    bool watch_is_last_blocker = false;       ///< the deletion of any one of them grants us a lease
    bool last = false;                        ///< nobody is queued after us
};

/// The queue rule for `permits` = K concurrent holders (1 = mutex): the first K
/// nodes hold a lease; a waiter watches the K nodes just ahead of it. For K > 1
/// only `lock_form` nodes (a semaphore's own) share the K leases: any other
/// contender ahead (a peer's mutex, writer or reader) blocks the waiter until it
/// is gone, and the waiter watches the nearest such node when fewer than K are ahead. A waiter is
/// granted when fewer than K nodes are ahead; while K or more are, the K nearest
/// are ahead of it, so a deletion that can grant it is always one it watches (a
/// waiter watching only the node K places ahead would sleep through a holder
/// released out of order, leaving a permit idle). For a mutex that is the one
/// predecessor; when holders release in arrival order each release still wakes
/// one waiter.
queue_decision decide(const std::vector<lock_node>& sorted, std::string_view my_name, std::size_t permits = 1);

/// The read-write rule: a writer holds when it is first and watches its
/// immediate predecessor; a reader holds when no writer is ahead of it and
/// watches the nearest writer ahead. Every exclusive contender of any dialect
/// (a mutex's node too) is a writer; shared ones (zklock's read-, kazoo's
/// __rlock__, Curator's __READ__) are readers. Readers after a queued writer wait for it,
/// so writers do not starve.
queue_decision decide_read_write(const std::vector<lock_node>& sorted, std::string_view my_name);

/// How a recipe queues: which nodes take part and which rule decides.
struct queue_rule {
    node_role role = node_role::lock;        ///< what our node stands for in the recipe
    node_names names = node_names::zklock;   ///< how its name is spelled (form_of(names, role))
    bool read_write = false;          ///< writer/reader nodes under decide_read_write
    std::size_t permits = 1;          ///< holders at once under decide (1 = mutex)
    bool watch_parent = false;        ///< herd baseline: every waiter watches the child list
    /// Non-empty: the lock directory must carry this data (a semaphore's permit
    /// count). A directory with other data fails the acquire with
    /// errc::permits_mismatch; one without data gets it.
    std::string dir_data;
    /// Above zero: lock-delay (fsm/lock_delay.hpp). A clean release records
    /// itself in the directory's data; a grant after a loss waits this long.
    std::chrono::milliseconds lock_delay{0};
    /// Under the mutex rule: a release marks the node in the transaction that
    /// deletes it, so that its successor holds without listing
    /// (MutexOptions::mark_release, acquire_setup::mark_release).
    bool mark_releases = false;
};

/// Applies the rule to our node `my_name` in a listing (sorted once, see children_listing).
queue_decision decide(const queue_rule& rule, const children_listing& children, std::string_view my_name);
inline queue_decision decide(const queue_rule& rule, const std::vector<std::string>& children, std::string_view my_name) {
    return decide(rule, children_listing(children), my_name);
}

} // namespace zklock::detail
