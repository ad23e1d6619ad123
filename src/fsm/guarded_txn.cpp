#include "fsm/guarded_txn.hpp"

#include "fsm/path.hpp"

#include <zklock/error.hpp>

#include <zookeeper.h>

#include <optional>
#include <string>
#include <vector>

namespace zklock::detail {
namespace {

// A node path as an operation may name it: a lock path's rules (absolute, no
// empty or dot segment, not /zookeeper, valid UTF-8); a sequential create's
// prefix may end in any character but '/'.
check_result check_node_path(const std::string& path, const char* what) {
    auto r = validate_lock_path(path);
    if (!r) r.reason = std::string(what) + ": " + r.reason;
    return r;
}

} // namespace

check_result validate_guarded(const std::vector<std::string>& lock_nodes, const std::vector<guarded_op>& ops,
                              std::size_t max_request_bytes) {
    if (lock_nodes.empty())
        return {make_error_code(errc::invalid_argument), "a guarded transaction needs at least one lock node"};
    // Each operation's header and framing take a few dozen bytes besides its path and data.
    std::size_t bytes = 64;
    for (const auto& node : lock_nodes) {
        if (auto r = check_node_path(node, "lock node"); !r) return r;
        bytes += 32 + node.size();
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const auto& op = ops[i];
        if (auto r = check_node_path(op.path, ("operation " + std::to_string(i)).c_str()); !r) return r;
        if (op.version < -1)
            return {make_error_code(errc::invalid_argument),
                    "operation " + std::to_string(i) + ": version " + std::to_string(op.version) +
                        " (a node's version, or -1 for any)"};
        if ((op.type == guarded_op::kind::erase || op.type == guarded_op::kind::check) && !op.data.empty())
            return {make_error_code(errc::invalid_argument),
                    "operation " + std::to_string(i) + ": a delete or a check carries no data"};
        bytes += 64 + op.path.size() + op.data.size();
    }
    if (bytes > max_request_bytes)
        return {make_error_code(errc::invalid_argument),
                "the transaction takes about " + std::to_string(bytes) + " bytes, more than the server reads in one "
                "request (" + std::to_string(max_request_bytes) + ")"};
    return {};
}

namespace {

// The codes one operation of a multi fails with; any other code of the multi
// is the request's (its per-operation codes then say nothing).
bool operation_error(int rc) {
    switch (rc) {
    case ZNONODE: case ZNOAUTH: case ZBADVERSION: case ZNOCHILDRENFOREPHEMERALS: case ZNODEEXISTS:
    case ZNOTEMPTY: case ZINVALIDACL: case ZBADARGUMENTS: return true;
    default: return false;
    }
}

} // namespace

guarded_outcome read_guarded_answer(int rc, const std::vector<int>& op_errors, std::size_t guards) {
    if (rc == ZOK) return {};
    if (rc == ZCLOSING) return {make_error_code(errc::session_closed), std::nullopt};
    if (!operation_error(rc)) return {from_zookeeper(rc), std::nullopt};
    // The failing operation: the first whose code is neither ZOK (applied, then
    // rolled back) nor ZRUNTIMEINCONSISTENCY (not attempted after the failure).
    for (std::size_t i = 0; i < op_errors.size(); ++i) {
        const int e = op_errors[i];
        if (e == ZOK || e == ZRUNTIMEINCONSISTENCY) continue;
        if (i < guards) {
            // The lock's node is gone: the hold ended. Anything else the check
            // met (no permission to read it) is said as it is.
            return {e == ZNONODE ? make_error_code(errc::node_deleted) : from_zookeeper(e), std::nullopt};
        }
        return {from_zookeeper(e), i - guards};
    }
    // No operation owned up to it: the multi's own code, as the request's.
    return {from_zookeeper(rc), std::nullopt};
}

} // namespace zklock::detail
