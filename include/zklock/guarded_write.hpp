// zklock::commit_guarded: ZooKeeper writes that commit only while a lock is
// held, in one transaction with a check of the lock's node.
//
//     Mutex m(session, "/locks/job");
//     m.lock();
//     m.commit_guarded({guarded_op::set_data("/jobs/state", "done"),
//                       guarded_op::create("/jobs/log/entry-", "run 42")});
//
// The server applies every operation, or none: a holder whose lock is gone
// (its session expired, an operator deleted its node) can never commit, with
// no fencing token to carry, for state kept in ZooKeeper.
#pragma once

#include <zklock/export.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock {

class Session;

/// One write of a guarded transaction: ZooKeeper's create, set-data, delete
/// or version check, on any path the session may write.
struct guarded_op {
    /// What the operation does.
    enum class kind : std::uint8_t {
        create,    ///< a persistent node with `data` (the session's ACL); fails if it exists
        sequential,///< a persistent sequential node under the prefix `path` (the server appends the sequence)
        set_data,  ///< `data` into an existing node, if its version is `version` (-1: any)
        erase,     ///< deletes a node without children, if its version is `version` (-1: any)
        check,     ///< applies nothing: fails unless the node exists with version `version` (-1: any)
    };
    kind type = kind::check;   ///< what it does
    std::string path;          ///< the node (a sequential create's prefix)
    std::string data;          ///< create, sequential, set_data: the node's data
    std::int32_t version = -1; ///< set_data, erase, check: the version it needs (-1: any)

    /// A persistent node at `path` with `data`; fails (errc::node_exists) if it exists.
    static guarded_op create(std::string path, std::string data = {}) {
        return {kind::create, std::move(path), std::move(data), -1};
    }
    /// A persistent sequential node: `prefix` and the sequence the server appends.
    static guarded_op sequential(std::string prefix, std::string data = {}) {
        return {kind::sequential, std::move(prefix), std::move(data), -1};
    }
    /// `data` into the node at `path`, if its version is `version` (-1: any).
    static guarded_op set_data(std::string path, std::string data, std::int32_t version = -1) {
        return {kind::set_data, std::move(path), std::move(data), version};
    }
    /// Deletes the node at `path` (no children), if its version is `version` (-1: any).
    static guarded_op erase(std::string path, std::int32_t version = -1) {
        return {kind::erase, std::move(path), {}, version};
    }
    /// Applies nothing; fails unless `path` exists at version `version` (-1: any).
    static guarded_op check(std::string path, std::int32_t version = -1) {
        return {kind::check, std::move(path), {}, version};
    }
};

/// What a guarded transaction did.
struct guarded_result {
    /// For each operation, in order: the path it created (create, sequential),
    /// empty for the others and when nothing was applied.
    std::vector<std::string> created;
    /// The caller's operation that failed (index into the ops), when the
    /// failure was one of them (e.g. errc::bad_version, errc::node_exists);
    /// none when the guard failed or the request did.
    std::optional<std::size_t> failed_op;
};

/// Commits `ops` in one ZooKeeper multi that first checks that every node of
/// `lock_nodes` exists: all of it, or nothing. A lock's node (QueueLock::
/// node_path(), the ZKLOCK_LOCK_NODE that `zklock run` gives its command) is
/// the holder's ephemeral node, named with a random UUID, so it exists
/// exactly while that hold lasts; the check holds at the transaction's commit
/// on the server, whoever sends it and however late it arrives.
/// Errors (nothing applied): errc::node_deleted when a lock node is gone (the
/// lock was lost or released), the failing operation's own error with
/// `failed_op` set (errc::no_node, errc::node_exists, errc::bad_version,
/// errc::not_empty, errc::no_auth, ...), errc::invalid_path or
/// errc::invalid_argument for bad input (nothing sent), errc::session_expired,
/// errc::session_closed, errc::would_deadlock on the session's own thread, and
/// errc::connection_loss: the connection broke with the transaction sent; it
/// may or may not have been applied (read to find out; it is never retried).
/// Blocking.
///@{
ZKLOCK_EXPORT guarded_result commit_guarded(Session& session, const std::vector<std::string>& lock_nodes,
                                            const std::vector<guarded_op>& ops);
ZKLOCK_EXPORT guarded_result commit_guarded(Session& session, const std::vector<std::string>& lock_nodes,
                                            const std::vector<guarded_op>& ops, std::error_code& ec);
///@}

} // namespace zklock
