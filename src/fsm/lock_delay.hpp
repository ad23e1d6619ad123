// Lock-delay: pure decisions, no server involved.
//
// With MutexOptions::lock_delay (and the same option of the other recipes), a
// holder that releases cleanly deletes its node and records its sequence in
// the lock directory's data in one transaction: the line
// `zklock released=<seq>`, after whatever the directory held before (a
// semaphore's `permits=K` stays). A contender about to be told it holds reads
// the directory's data and the queue it saw; when the node that handed the
// lock over went without that record (its session expired, someone deleted
// it), it waits lock_delay before it is told, so a holder that is paused or
// cut off and still acts has that long to notice its loss.
#pragma once

#include "fsm/lock_node.hpp"
#include "fsm/node_stat.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

/// The text that starts the clean-release record in a lock directory's data.
inline constexpr std::string_view release_marker = "zklock released=";

/// A lock directory's data, split: what it held besides the record, and the
/// sequence the last clean release recorded.
struct directory_data {
    std::string base;
    std::optional<std::int32_t> released;
};
directory_data split_release_marker(std::string_view data);

/// The data a clean release of the node with sequence `released` writes: the
/// directory's data without its old record, then the new record on its own line.
std::string with_release_marker(std::string_view data, std::int32_t released);

/// The lock directory as read right before our create.
struct directory_before {
    bool exists = false;
    std::int32_t num_children = 0;
    std::int32_t cversion = 0;  ///< child changes so far: 0 = no child ever
    std::int64_t pzxid = 0;     ///< the last child change's zxid
    std::int64_t mzxid = 0;     ///< the last data change's zxid
    directory_data data;
};

/// A directory's child counters (its Stat): ZooKeeper adds one to the
/// cversion at each create and at each delete of a child.
struct child_counters {
    std::int32_t cversion = 0;
    std::int32_t num_children = 0;
};

/// What a contender knows when it is about to hold.
struct handover {
    /// The sequences of the contenders ahead of us at our previous listing;
    /// nullopt when the listing that grants us is our first.
    std::optional<std::vector<std::int32_t>> ahead_before;
    /// The sequences of the contenders ahead of us now (holders we share with
    /// under a semaphore or as readers).
    std::vector<std::int32_t> ahead_now;
    /// The directory's data when we were about to hold.
    directory_data now;
    /// The directory before our create (nullopt: not read).
    std::optional<directory_before> before;
    /// The directory's child counters at the check, read with its data
    /// (nullopt: not read).
    std::optional<child_counters> checked;
    /// One holder at a time (a mutex, a writer): holders leave in sequence
    /// order, so the newest contender that left decides.
    bool exclusive = true;
};

/// Where an attempt's check of its handover stands. A grant decided while the
/// check is reading or delaying waits for it (another listing can decide the
/// grant again meanwhile: a retried one beside a reconnect's re-check).
enum class handover_check { unchecked, reading, delaying, done };

/// True when the lock came to us by a clean release (or from nobody), false
/// when a node that may have held it went without one: then the grant waits
/// lock_delay. Judged conservatively: a doubt is a loss.
/// - First listing: the directory existed and had had a child (a missing or
///   never-used one may be a container the server reaped after a loss, and
///   made again), nothing left between the read before our create and the
///   listing (the directory had no more children than the contenders now
///   ahead), no child went between the read and the check (every child change
///   since the read, by the cversions, was a create: a node made and gone
///   before our create may have held, and the record read cannot tell), and
///   an empty directory's last child change was a clean release (one
///   transaction: pzxid == mzxid, with a record).
/// - Later: of the contenders ahead of us that left since the previous listing,
///   exclusive: the newest recorded a clean release; shared (several holders):
///   exactly one left and it recorded one.
bool clean_handover(const handover& h);

/// The sequences of the contenders ahead of ours, in queue order, as a
/// contender keeps them from one listing to its grant: the front of the
/// listing's sequences, which every contender that listing answers shares
/// (copies would cost a queue of N waiters N*N/2 sequences: 200 MB at
/// 10,000), less the contenders known gone since (without()).
class queue_ahead {
public:
    /// Fewer contenders ahead than this are copied from the listing rather
    /// than shared (sequences_ahead): a few sequences should not keep a long
    /// listing alive.
    static constexpr std::size_t shared_from = 64;

    queue_ahead() = default;
    /// The first `count` of `listing`'s sequences.
    queue_ahead(std::shared_ptr<const std::vector<std::int32_t>> listing, std::size_t count);
    /// The sequences, in queue order (handover's, at the check before a grant).
    std::vector<std::int32_t> to_vector() const;
    /// The listing the sequences are the front of (shared, not copied).
    const std::vector<std::int32_t>* listing() const noexcept { return listing_.get(); }

private:
    friend queue_ahead without(queue_ahead ahead, std::string_view gone);
    std::shared_ptr<const std::vector<std::int32_t>> listing_;
    std::size_t count_ = 0;
    std::vector<std::int32_t> gone_;  // of the first count_, those known gone
};

/// The sequences of the contenders ahead of `my_name` in a listing, in queue
/// order (every contender, as the mutex rule counts them); empty when it is
/// not there. Reads the listing's queue order, worked out once for every
/// contender the listing answers (children_listing).
queue_ahead sequences_ahead(const children_listing& children, std::string_view my_name);

/// `ahead` without the contender named `gone` (granted by one deletion,
/// without a listing: the others are still ahead).
queue_ahead without(queue_ahead ahead, std::string_view gone);

/// Lock-delay: the lock directory as read before a create (nullopt when the
/// read failed).
std::optional<directory_before> directory_read(int rc, std::string_view data, const node_stat& st);
/// Lock-delay: the directory's data that records a clean release of `node`
/// (nullopt without the read before its create): what the directory held
/// (`rule_data` when given: a semaphore's permit count) and the record.
std::optional<std::string> release_record_data(std::string_view rule_data,
                                                             const std::optional<directory_before>& before,
                                                             std::string_view node);

} // namespace zklock::detail
