// zklock bench's floor: the leanest uncontended lock cycle the ZooKeeper C
// client can run (bench_floor.cpp), measured beside zklock's on the same
// server so every report gives zklock's ratio to it.
#pragma once

#include <zklock/acl.hpp>

#include <string>
#include <vector>

namespace zklock::cli {

struct floor_options {
    std::string connect;
    std::string dir;                ///< the lock directory the loop creates its nodes in
    std::vector<auth_entry> auth;   ///< added to the handle; nodes then get creator-all ACLs
    int ops = 2000;                 ///< measured cycles
    int warmup = 200;               ///< unmeasured cycles first
};

struct floor_result {
    std::vector<double> samples_us;  ///< one cycle each: delete previous + create + getChildren, pipelined
    double wall_s = 0;               ///< the measured cycles' wall time
};

/// Runs the loop; throws zklock::error when the server cannot be reached or a request fails.
floor_result run_floor(const floor_options& options);

}  // namespace zklock::cli
