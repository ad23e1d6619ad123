// A release transaction the server refused as a whole: which op it refused,
// and what the release does then. Shared by the plain release (the session's
// owned transaction, engine/release_txn.cpp) and the requeue
// (engine/contender_requeue.cpp), so the two answer a refusal alike. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace zklock::detail {

/// What each op of a release transaction is for (engine/release_txn.hpp's
/// release_ops), to tell which one the server refused.
enum class release_role { proof, mark, remove, extra };

/// The op a refused multi failed on: the first whose code is neither ZOK nor
/// the "rolled back" (ZRUNTIMEINCONSISTENCY) of the ops after it. `at` is its
/// index (errors.size() when none is found), `role` its role when `roles` has one.
struct refused_op {
    std::size_t at = 0;
    std::optional<release_role> role;
};
refused_op find_refused_op(const std::vector<int>& errors, const std::vector<release_role>& roles);

/// What a release does once its transaction was refused with `rc` on an op of
/// `role`: send it again without the `.released` sibling (the server refused
/// the sibling's create: one exists already, or the directory's ACL; a lost
/// connection or a gone directory is no such refusal); send it again without
/// the mark (the node's ACL refuses the write: the successor lists instead);
/// or neither (the caller reads `rc`: ZNONODE says a node is gone).
enum class release_retry { without_proof, without_mark, no };
release_retry retry_after_refusal(std::optional<release_role> role, int rc) noexcept;

} // namespace zklock::detail
