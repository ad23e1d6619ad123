// A guarded transaction's request (include/zklock/guarded_write.hpp),
// asynchronous: what the blocking commit_guarded() forms wait on, and what a
// caller on the session's own thread (the simulation's contenders) uses.
#pragma once

#include <zklock/guarded_write.hpp>

#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::detail {

class session_impl;

/// Checks `lock_nodes` and `ops` (validate_guarded), then sends one multi:
/// a check of every lock node, then the operations. `fn(ec, result)` runs on
/// the session's strand with the answer (read_guarded_answer), or at once,
/// on the calling thread, when the input is refused (nothing sent).
void async_commit_guarded(const std::shared_ptr<session_impl>& session, const std::vector<std::string>& lock_nodes,
                          const std::vector<guarded_op>& ops,
                          std::function<void(std::error_code, guarded_result)> fn);

} // namespace zklock::detail
