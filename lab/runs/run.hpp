// zklock bench's scenarios over zklock::Lock: one runner for every backend
// (ZooKeeper's Mutex with its options, Redis, Redlock, PostgreSQL, flock).
//
//   uncontended  one client, one lock: acquire + release
//   contended    K clients on one lock, each acquiring again right after its
//                release: acquisitions/s, the wait, the handoff (a holder's
//                release call to the next grant), fairness (longest wait,
//                grants that overtook an earlier request), wake-ups per grant;
//                each client on its own thread, or all on one (--one-thread)
//   separate     K clients on K different locks: what the server sustains
//                when nobody waits
#pragma once

#include "runs/fairness.hpp"
#include "runs/result.hpp"

#include <zklock/lock.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <string>
#include <vector>

namespace zklock::cli {

struct scenario_options {
    std::string backend;  ///< the results' backend
    int ops = 2000;       ///< measured acquisitions
    /// Each release waits for the server's answer (async_unlock). Otherwise
    /// unlock() returns once the release is sent (ZooKeeper: the session owns
    /// the delete), as a caller of unlock() sees it.
    bool confirm_unlock = true;
};

/// `cycles` acquire + release cycles, each release confirmed: unmeasured.
void warm_up(Lock& lock, int cycles);

/// Acquire + release on `lock` with nobody else on it. An unconfirmed last
/// release is waited for (outside the measurement), so the next run starts clean.
bench_result run_uncontended(Lock& lock, const scenario_options& o);

/// locks.size() clients, each on its own thread with its own lock object (and
/// session or connection); `separate`: each lock a different lock, otherwise
/// all the same lock (contended).
bench_result run_clients(const std::vector<Lock*>& locks, const scenario_options& o, bool separate);

/// The contended (or `separate`) scenario's figures from every client's
/// grants, the clients released at `start`: the waits, the handoffs (a
/// holder's release to the next grant), fairness, the clients' counters.
bench_result clients_result(std::vector<grant_record> all, bench_clock::time_point start,
                            const std::vector<Lock*>& locks, const scenario_options& o, bool separate);

/// The contended scenario with every client on one thread: `locks` are all
/// on the same lock and their completions run on `executor`, which one
/// thread runs (as the C client's floor drives its handles). Each client
/// acquires with async_lock and, in its handler, releases with unlock() and
/// acquires again: no thread hands a grant or a release to another. Called
/// from another thread, which it blocks until the run is over.
bench_result run_clients_on_one_thread(const boost::asio::any_io_executor& executor, const std::vector<Lock*>& locks,
                                       const scenario_options& o);

} // namespace zklock::cli
