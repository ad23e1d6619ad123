// What a release sends: the transaction that deletes a holder's nodes, with
// the release proof, the release mark and lock-delay's records (the lock
// protocol's, not the session's), and the owed release built on it, which the
// session retries across connection loss (session_impl::delete_owned_txn).
#pragma once

#include "fsm/release_refusal.hpp"
#include "session/session_impl.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::detail {

/// The ops of the transaction that releases `paths`: per node, with `proof`
/// its `.released` sibling created (with that ACL) and deleted
/// (fsm/release_proof.hpp), with `mark` its data written (empty), then its
/// delete; `extra` last. `roles`, when given, gets each op's role. A requeue
/// (contender_engine) appends its create to these.
std::vector<multi_op> release_ops(const std::vector<std::string>& paths, bool mark,
                                  const std::shared_ptr<const c_acl>& proof, const std::vector<multi_op>& extra,
                                  std::vector<release_role>* roles = nullptr);

/// Releases `paths` (a lock set's nodes, or one node) in one transaction the
/// session owes until it commits or the owner's session (`owner`) is gone: no
/// queue sees a set leave before the others. When one of them is already gone
/// (NONODE), the rest are deleted one by one. `extra` ops join the transaction
/// (lock-delay's clean-release record). `mark`: each node's data is written
/// (empty) before its delete, the release mark a successor under the mutex
/// rule holds on (acquire_setup::mark_release); a node whose ACL refuses the
/// write is deleted without it. `proof` (with mark): each node's `.released`
/// sibling is created (with this ACL) and deleted first, the release proof its
/// successor holds on without a read; when the server refuses the sibling (it
/// exists, or the ACL), without it. fn (optional) as
/// session_impl::delete_owned's, once every node is gone.
void release_owned(session_impl& session, std::vector<std::string> paths, std::int64_t owner,
                   std::function<void(std::error_code)> fn = {}, std::vector<multi_op> extra = {}, bool mark = false,
                   std::shared_ptr<const c_acl> proof = nullptr);

} // namespace zklock::detail
