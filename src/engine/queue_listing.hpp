// One listing of a lock's queue (getChildren, then getData per contender,
// pipelined): what list_contenders, list_queue and QueueWatch read.
#pragma once

#include "session/session_impl.hpp"

#include <zklock/mutex.hpp>

#include <functional>
#include <memory>
#include <string>
#include <system_error>

namespace zklock::detail {

/// Lists the queue at `path` once the session is connected (within its
/// connect_timeout when `connect_deadline`, otherwise whenever it is) and calls
/// `done` on the strand. With `on_change` set, the listing leaves a watch that
/// calls it once (on the strand) when the children change, or, for an absent
/// path, when the path is created; an error sets no watch.
void list_queue_async(const std::shared_ptr<session_impl>& session, std::string path, std::function<void()> on_change,
                      bool connect_deadline, std::function<void(std::error_code, queue_listing)> done);

} // namespace zklock::detail
