// zklock bench's requeue rows: workers that take turns on one lock with
// QueueLock::requeue() (release and queue again in one transaction), as a
// fleet of workers does, beside the plain lock() + unlock() rows.
//
//   uncontended  one worker: a turn is one requeue(), from the call to the grant
//   contended    K workers on one lock, each calling requeue() as soon as it is
//                granted: a grant's wait runs from that call (its release) to
//                the grant, the handoff from a holder's call to the next grant
#pragma once

#include "runs/result.hpp"

#include <zklock/queue_lock.hpp>

#include <functional>
#include <vector>

namespace zklock::cli {

struct requeue_options {
    int ops = 2000;     ///< measured turns
    int warmup = 200;   ///< uncontended: unmeasured turns first
    /// Called as the measured turns begin (after the warm-up; contended, once
    /// every worker is queued): where a reading of the server's counters goes.
    std::function<void()> on_measuring;
};

/// The turns of `workers` (one: uncontended; more: contended), each a place
/// in the queue of the same lock path. Each worker takes the lock once with
/// lock(), then turns with requeue(), and lets go with unlock() at the end.
/// Throws the first worker's error once every worker has stopped.
bench_result run_requeue_turns(const std::vector<QueueLock*>& workers, const requeue_options& o);

} // namespace zklock::cli
