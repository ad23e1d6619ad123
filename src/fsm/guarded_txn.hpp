// The decisions of a guarded transaction (include/zklock/guarded_write.hpp):
// what input is refused before any server call, and what the server's answer
// to the multi means. Pure functions, no server involved.
#pragma once

#include "fsm/check_result.hpp"

#include <zklock/guarded_write.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::detail {

/// Refuses (nothing sent): no lock node (errc::invalid_argument: a
/// transaction guarded by nothing is no guarded transaction), a lock node or
/// an operation's path that is not a valid node path (errc::invalid_path), a
/// version below -1, or a request larger than `max_request_bytes` with every
/// path and data counted (errc::invalid_argument).
check_result validate_guarded(const std::vector<std::string>& lock_nodes, const std::vector<guarded_op>& ops,
                              std::size_t max_request_bytes);

/// What the multi of `guards` checks followed by the caller's operations
/// answered: `rc` the multi's code, `op_errors` each operation's (ZooKeeper C
/// codes; ZOK for those before the failing one, ZRUNTIMEINCONSISTENCY for
/// those after it).
struct guarded_outcome {
    std::error_code error;
    std::optional<std::size_t> failed_op;  ///< index into the caller's operations
};
guarded_outcome read_guarded_answer(int rc, const std::vector<int>& op_errors, std::size_t guards);

} // namespace zklock::detail
