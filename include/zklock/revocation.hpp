// Cooperative revocation, in Apache Curator's protocol: ask whoever holds a
// lock to let go.
//
//     zklock::MutexOptions o;
//     o.revocable = true;                    // let go when asked (Curator's makeRevocable)
//     zklock::Mutex job(session, "/locks/job", o);
//
//     zklock::request_revocation(session, "/locks/job/_c_...-lock-0000000007");
//
// A request writes the bytes `__REVOKE__` into the holder's node, as
// Curator's Revoker.attemptRevoke() does, so it reaches Curator's revocable
// InterProcessMutex holders as well as zklock's; and zklock's revocable locks
// let go when Curator's Revoker asks them. Revocation is cooperative: a holder
// that is not revocable (a zklock lock without the option, Curator without
// makeRevocable(), kazoo, go-zookeeper) ignores the request and keeps the lock.
#pragma once

#include <zklock/export.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <system_error>

namespace zklock {

class Session;

/// The data a revocation request writes into a holder's node: Curator's
/// LockInternals.REVOKE_MESSAGE. A holder compares its node's whole data with it.
inline constexpr std::string_view revocation_request_data = "__REVOKE__";

/// What a revocable lock's handler is told when a request arrives.
struct revocation_request {
    std::string path;  ///< the lock's path (of a lock set: the path whose node was asked)
    std::string node;  ///< the full path of the node the request was written into
};

/// The handler of a revocable lock (MutexOptions::on_revocation and the other
/// recipes' options): called on the session's executor, once per request that
/// arrives while the lock is held. The lock stays held until someone calls
/// unlock() (or resign()), typically the handler once the work in progress is
/// at a point where it can stop.
using revocation_handler = std::function<void(const revocation_request&)>;

/// Asks the holder of the lock node `node_path` to let go: writes
/// revocation_request_data into the node (one setData, any version), as
/// Curator's Revoker.attemptRevoke() does. Returns once the server has applied
/// the write; whether and when the holder lets go is up to the holder (a
/// revocable zklock lock sees it within a round trip; a lock that is not
/// revocable keeps it). The request replaces the node's data (the owner name
/// `zklock status` shows) and stays there until the node goes: `zklock status`
/// shows it as pending. A waiting node may be asked too: a revocable zklock
/// lock honours the request once it is granted (Curator's calls its listener
/// at once).
///
/// `node_path` must be a contender's node (its name one of the dialects zklock
/// reads: QueueLock::node_path(), contender::node under its lock path, Curator's
/// getParticipantNodes()); a lock directory or any other node is refused, since
/// the request would overwrite its data. Errors: errc::invalid_path (not a
/// valid node path), errc::invalid_argument (not a lock node's name; nothing
/// sent), errc::no_node (no such node: its hold ended, or it never existed),
/// errc::no_auth (the node's ACL does not let this session write it),
/// errc::session_closed, errc::session_expired, errc::connection_loss (the
/// write may or may not have been applied), errc::would_deadlock on the
/// session's own thread. Blocking; thrown as zklock::error, or in `ec`.
///@{
ZKLOCK_EXPORT void request_revocation(Session& session, const std::string& node_path);
ZKLOCK_EXPORT void request_revocation(Session& session, const std::string& node_path, std::error_code& ec);
///@}

/// True when `data`, a lock node's data (contender::data), is a pending
/// revocation request.
constexpr bool is_revocation_request(std::string_view data) noexcept { return data == revocation_request_data; }

} // namespace zklock
