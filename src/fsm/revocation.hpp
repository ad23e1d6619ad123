// Cooperative revocation in Apache Curator's protocol (include/zklock/
// revocation.hpp): what a holder makes of its own node's data, and who holds a
// queue (the nodes a request to "the holders" is written into). Pure
// functions, no server involved.
#pragma once

#include "fsm/check_result.hpp"
#include "fsm/lock_node.hpp"
#include <zklock/revocation.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

// A request is the node's whole data equal to revocation_request_data
// (zklock::is_revocation_request), as Curator compares it (Arrays.equals):
// nothing before or after.

/// What a holder does with a read of its own node's data.
enum class revocation_step {
    none,    ///< no request, or the one already seen (read again after a reconnect)
    ignore,  ///< a new request, to a lock that is not revocable: report it, keep the lock
    honour,  ///< a new request, to a revocable lock: report it, then its handler (by default: let go)
};

/// One hold's view of the requests written into its node. A request stays in
/// the node's data until the node goes, so a read sees the same request again
/// (the watch set anew after a reconnect); a new request is a new write, a new
/// data version.
class revocation_watch {
public:
    explicit revocation_watch(bool revocable) noexcept : revocable_(revocable) {}
    /// The node's data as read with its data version: what to do.
    revocation_step read(std::string_view data, std::int32_t version) noexcept;
    bool revocable() const noexcept { return revocable_; }

private:
    bool revocable_;
    std::optional<std::int32_t> seen_version_;  // of the last request seen
};

/// The contenders of a listing that hold now under `rule` (a mutex's first
/// node; a semaphore's first K of its own nodes; the readers ahead of the
/// first writer, or that writer), in queue order: the nodes a request to the
/// holders of a lock is written into.
std::vector<std::string> holders_under(const queue_rule& rule, const std::vector<std::string>& children);

/// Whether `node_path` may take a revocation request: a valid node path
/// (validate_lock_path(): errc::invalid_path otherwise) whose last element is
/// a contender's name of a dialect zklock reads (errc::invalid_argument
/// otherwise: a request written into a lock directory or any other node would
/// overwrite its data, a semaphore's permit count for one).
check_result check_revocation_target(std::string_view node_path);

} // namespace zklock::detail
