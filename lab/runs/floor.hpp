// zklock bench's floors: the leanest uncontended lock cycle and the leanest
// contended handoff the ZooKeeper C client can run (runs/floor.cpp), measured
// beside zklock's on the same server so every report gives zklock's ratio to them.
#pragma once

#include <zklock/acl.hpp>

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace zklock::cli {

struct floor_options {
    std::string connect;
    std::string dir;                ///< the lock directory the loop creates its nodes in
    std::vector<auth_entry> auth;   ///< added to the handle; nodes then get creator-all ACLs
    int ops = 2000;                 ///< measured cycles
    int warmup = 200;               ///< unmeasured cycles first
    /// A holder hands the lock back and queues again in one transaction: the
    /// release's ops and the next node's create in one multi, the listing
    /// behind it. What a release-and-requeue call would save a client of this
    /// recipe (zklock has none): a transaction, and the log sync it waits for,
    /// per cycle. false: the release and the create are transactions of their own.
    bool requeue = false;
    /// Called as the measured cycles (or grants) begin, after the warm-up,
    /// outside the measured time: where a reading of the server's counters goes.
    std::function<void()> on_measuring;
};

struct floor_result {
    std::vector<double> samples_us;  ///< one cycle each: delete previous + create (or, requeue, both in one multi) + getChildren, pipelined
    double wall_s = 0;               ///< the measured cycles' wall time
    nlohmann::json client_schedule;  ///< the loop's thread per cycle (runs/client_schedule.hpp), or null
};

/// Runs the loop; throws zklock::error when the server cannot be reached or a request fails.
floor_result run_floor(const floor_options& options);

/// The same server, lock directory, credentials and counts, with the clients.
struct handoff_floor_options : floor_options {
    int clients = 8;  ///< handles on the lock, all driven from one thread (ops: measured grants)
    /// A holder releases as a Mutex does (create and delete its node's
    /// `.released` sibling, write its data, delete it: one transaction), and a
    /// waiter watches its predecessor (getData) and that sibling (exists) and
    /// holds on the sibling's creation. false: the plain delete, an exists
    /// watch, the hold on the deletion.
    bool release_proof = false;
};

struct handoff_floor_result {
    std::vector<double> acquire_us;  ///< per grant: from queueing (create sent) to the grant
    std::vector<double> handoff_us;  ///< per grant after a release: from the holder's delete sent to this grant
    double wall_s = 0;               ///< the measured grants' wall time
    nlohmann::json client_schedule;  ///< the loop's thread per grant (runs/client_schedule.hpp), or null
};

/// The lean contended loop: each waiter watches its predecessor and takes its
/// deletion as the grant (sound here because only holders leave), each holder
/// releases at once and queues again. Throws as run_floor.
handoff_floor_result run_handoff_floor(const handoff_floor_options& options);

/// The many-locks floor: one handle takes `locks` distinct locks under `dir`
/// at once, every request in flight together, then releases them all.
struct locks_floor_options : floor_options {
    int locks = 10000;
};

struct locks_floor_result {
    double acquire_s = 0;  ///< the first create sent to the last listing's reply
    double release_s = 0;  ///< the first delete sent to the last delete's reply
};

/// Per lock, pipelined: the lock's directory (a container; it is missing, as
/// for a lock taken the first time), the EPHEMERAL_SEQUENTIAL node in it and
/// its listing; then the node's delete. The directories (and `dir`) are
/// deleted after the measured phases, so the server has none left to reap.
/// Throws as run_floor.
locks_floor_result run_locks_floor(const locks_floor_options& options);

}  // namespace zklock::cli
