// Lock path validation: pure, no server involved.
#pragma once

#include "fsm/check_result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace zklock::detail {

/// Longest lock path zklock accepts, in bytes. The server's own bound is the
/// request size (jute.maxbuffer, 1 MiB by default); lock paths far shorter than
/// that keep every getChildren reply of the parent well inside it.
inline constexpr std::size_t max_lock_path_length = 1024;


/// Checks a lock path (errc::invalid_path and a reason when refused) against ZooKeeper's path rules and zklock's own:
/// absolute, no empty segment (`//`), no `.` or `..` segment, no trailing `/`,
/// not the root, not under the reserved `/zookeeper`, valid UTF-8 without
/// control characters (U+0000-U+001F, U+007F-U+009F) or the code points the
/// server refuses (U+D800-U+F8FF, U+FFF0-U+FFFF, and everything beyond U+FFFF,
/// which the server sees as a surrogate pair), at most max_lock_path_length bytes.
check_result validate_lock_path(std::string_view path);

/// The ancestors of `path` from the top down, excluding the root and the path
/// itself: "/a/b/c" gives {"/a", "/a/b"}.
std::vector<std::string> ancestors(std::string_view path);

/// "<dir>/<child>", allocated once at its length (built with `+`, a path's
/// capacity came to about twice its length: the strings a held lock keeps).
std::string child_path(std::string_view dir, std::string_view child);

} // namespace zklock::detail
