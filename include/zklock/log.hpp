// zklock::log_sink: where a Session's log goes, the ZooKeeper C client's
// messages for that session's connection and zklock's own events alike.
#pragma once

#include <zklock/export.hpp>

#include <cstdint>
#include <functional>
#include <string_view>

namespace zklock {

/// Severity of a log record; a sink receives records up to its level.
enum class log_level : int {
    none = 0,   ///< nothing
    error = 1,  ///< a failure: a lock lost, a session expired, the C client's errors
    warn = 2,   ///< trouble that may pass: a connection lost (suspended), a retry
    info = 3,   ///< the session's life: connected, reconnected, closed
    debug = 4,  ///< the C client's every step (its DEBUG level)
};

/// One log record. The views are valid only during the callback.
struct log_record {
    /// How severe: error, warn, info or debug.
    log_level level = log_level::info;
    /// "zookeeper" (a message of the C client, its timestamp and thread prefix
    /// taken off) or "zklock" (an event of the Session or of a lock).
    std::string_view source;
    /// The line, without a trailing newline.
    std::string_view message;
    /// The session's id, 0 before the first session is established.
    std::int64_t session_id = 0;
};

/// A Session's log: `callback` receives every record up to `level`.
///
/// Threading: the callback runs on the session's strand (its own thread, or the
/// caller's executor), inside zklock's and the C client's calls (the C client's
/// last lines, as it closes the connection, may come from the thread that
/// destroys the Session, when nothing else runs on it any more): it must not
/// block, must not throw, and must not call a blocking function of the Session
/// or of its locks. Copy what it needs and return.
///
/// The C client decides what to format with one level for the whole process
/// (its default is info): a sink receives the C client's records up to both its
/// own level and that one. zklock never changes the process-wide level by
/// itself; set_zookeeper_client_log_level() does, when the program asks.
struct log_sink {
    /// The most verbose level delivered (default warn).
    log_level level = log_level::warn;
    /// Receives every record up to `level` (see the threading note above).
    std::function<void(const log_record&)> callback;
};

/// Sets the ZooKeeper C client's log level for the whole process
/// (zoo_set_debug_level): the C client formats a line only up to it, for every
/// connection of the process (zklock's Sessions and any other C-client code),
/// before a sink sees it. Its default is info, so a sink that wants the C
/// client's debug lines needs set_zookeeper_client_log_level(log_level::debug)
/// once, at start. log_level::none turns the C client's lines off for everyone.
/// zklock itself never calls it.
ZKLOCK_EXPORT void set_zookeeper_client_log_level(log_level level) noexcept;

/// The ZooKeeper C client's process-wide log level now.
ZKLOCK_EXPORT log_level zookeeper_client_log_level() noexcept;

} // namespace zklock
