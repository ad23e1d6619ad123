// What zklock reads of a znode's Stat. Plain data, so the decisions in
// src/fsm take it without the ZooKeeper client's headers.
#pragma once

#include <cstdint>

namespace zklock::detail {

/// Minimal copy of a znode's Stat: what the recipes read.
struct node_stat {
    std::int64_t czxid = 0;
    std::int64_t ctime_ms = 0;
    std::int64_t ephemeral_owner = 0;
    std::int32_t version = 0;
    std::int32_t num_children = 0;
    std::int32_t cversion = 0;
    std::int64_t pzxid = 0;
    std::int64_t mzxid = 0;
};

} // namespace zklock::detail
