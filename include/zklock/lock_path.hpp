// Lock paths checked before any server call: what a Mutex, a MultiMutex and
// every other ZooKeeper recipe refuses with errc::invalid_path, for tools that
// take paths from their users and want to say what is wrong before they
// connect. Pure functions: no server, no Session.
#pragma once

#include <zklock/export.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace zklock {

/// The longest lock path zklock accepts, in bytes: far shorter than a request
/// may be (jute.maxbuffer), so every listing of a lock's parent stays small.
inline constexpr std::size_t max_lock_path_bytes = 1024;

/// Checks a lock path as every recipe does before its first request: absolute,
/// no empty segment (`//`), no `.` or `..` segment, no trailing `/`, not the
/// root, not under the reserved `/zookeeper`, valid UTF-8 without control
/// characters (U+0000-U+001F, U+007F-U+009F) or the code points the server
/// refuses (U+D800-U+F8FF, U+FFF0-U+FFFF and everything beyond U+FFFF), at most
/// max_lock_path_bytes. Returns {} when accepted; otherwise errc::invalid_path,
/// with a sentence saying what is wrong in `*reason` (when given; it quotes
/// nothing of the path). Thread-safe.
ZKLOCK_EXPORT std::error_code validate_lock_path(std::string_view path, std::string* reason = nullptr);

/// Checks the lock paths of a lock set (MultiMutex) as its constructor does:
/// at least one; each valid (validate_lock_path); none twice; none under
/// another ("/locks/a" and "/locks/a/b": the inner lock's node would sit in the
/// outer lock's queue). errc::invalid_path, with a sentence naming the path in
/// `*reason`, or {}. Thread-safe.
ZKLOCK_EXPORT std::error_code validate_lock_set(const std::vector<std::string>& paths, std::string* reason = nullptr);

/// The chroot of a ZooKeeper connect string: "/app" of "h1:2181,h2:2181/app",
/// "" when it has none. Every path the session names is under it on the
/// server, so a missing chroot makes every request fail with errc::no_node.
ZKLOCK_EXPORT std::string_view connect_string_chroot(std::string_view connect);

} // namespace zklock
