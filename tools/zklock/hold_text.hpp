// What run, lock and elect say of a lock they could not take or lost: who
// holds a busy one (as zklock status names them), a semaphore's number of
// permits that differs, why a hold was lost. Pure functions; unit-tested.
#pragma once

#include <zklock/queue_lock.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <system_error>

namespace zklock::cli {

/// What -n says of a busy lock: `busy` (holding::busy_message(): "lock /x is
/// held by someone else") and whose it is, as zklock status shows them in
/// OWNER: "(holder: billing-7)", "(holders: a, b)" for the permits of a
/// semaphore (`permits` more than 1), or for a reader (`shared`) the first
/// writer in the queue: "(writer: w)". A node without data is named by its
/// node. Owners are node data: each is shortened() (notice() escapes it). Just
/// `busy` when `listing` shows nobody that blocks.
std::string busy_text(const std::string& busy, const queue_listing& listing, std::size_t permits, bool shared);

/// "/x is a semaphore of 2 permits, not 3 (every participant must give the
/// same --permits)"; without `stored` (it could not be read): "/x is a
/// semaphore with another number of permits than 3 (...)".
std::string permits_mismatch_text(const std::string& path, std::optional<std::size_t> stored, std::size_t asked);

/// Why a lock (`node` "lock node") or a leadership (`node` "election node")
/// was lost, in the words of a ZooKeeper run: "the ZooKeeper session
/// expired", "another client deleted the lock node", "the connection was lost
/// for longer than the session timeout"; another error's message otherwise.
/// No parentheses: the caller's sentence goes around it.
std::string loss_reason(const std::error_code& ec, const std::string& node = "lock node");

} // namespace zklock::cli
