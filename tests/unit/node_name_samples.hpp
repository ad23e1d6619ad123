// What the unit tests of node names share: the sequence the server appends, a
// node's name, and one tag in both spellings (a UUID, and its 32 hex digits as
// kazoo writes them).
#pragma once

#include "fsm/lock_node.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::test {

/// What the server appends: "%010d" of the parent's counter.
inline std::string seq(std::int32_t s) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%010d", s);
    return buf;
}
/// A lock node's name as zklock writes it: the tag's prefix and the sequence.
inline std::string node(std::string_view tag, std::int32_t s) { return detail::node_name_prefix(tag) + seq(s); }
/// The names of `nodes`, in their order.
inline std::vector<std::string> names(const std::vector<detail::lock_node>& nodes) {
    std::vector<std::string> out;
    for (const auto& n : nodes) out.push_back(n.name);
    return out;
}
inline const std::string uuid = "4f1c2b7e-9a3d-4e5f-8a6b-0c1d2e3f4a5b";
inline const std::string hex32 = "4f1c2b7e9a3d4e5f8a6b0c1d2e3f4a5b";

} // namespace zklock::test
