// What the unit tests of node names share: the sequence the server appends and
// one tag in both spellings (a UUID, and its 32 hex digits as kazoo writes them).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace zklock::test {

/// What the server appends: "%010d" of the parent's counter.
inline std::string seq(std::int32_t s) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%010d", s);
    return buf;
}
inline const std::string uuid = "4f1c2b7e-9a3d-4e5f-8a6b-0c1d2e3f4a5b";
inline const std::string hex32 = "4f1c2b7e9a3d4e5f8a6b0c1d2e3f4a5b";

} // namespace zklock::test
