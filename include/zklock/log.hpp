// zklock::log_sink: where a Session's log goes, the ZooKeeper C client's
// messages for that session's connection and zklock's own events alike.
#pragma once

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
/// The C client decides what to format with one level for the whole process.
/// A sink that asks for more than that level raises it (never lowers it), so
/// other C-client connections of the process that log to stderr may print more.
struct log_sink {
    /// The most verbose level delivered (default warn).
    log_level level = log_level::warn;
    /// Receives every record up to `level` (see the threading note above).
    std::function<void(const log_record&)> callback;
};

} // namespace zklock
