// Hands one record to a log_sink, the way every service of zklock does: only up
// to the sink's level, and a sink that throws is ignored (it runs inside I/O
// callbacks that cannot take an exception).
#pragma once

#include <zklock/log.hpp>

#include <cstdint>
#include <string_view>

namespace zklock::detail {

/// True when `sink` has a callback that takes records of `level`: a caller
/// builds the message only then.
inline bool wants(const log_sink& sink, log_level level) noexcept {
    return sink.callback && level != log_level::none && level <= sink.level;
}

/// Delivers {level, source, message, session_id} to `sink` when it wants it.
inline void emit(const log_sink& sink, log_level level, std::string_view source, std::string_view message,
                 std::int64_t session_id = 0) noexcept {
    if (!wants(sink, level)) return;
    try {
        sink.callback(log_record{level, source, message, session_id});
    } catch (...) {
        // A sink must not throw; the record is dropped.
    }
}

} // namespace zklock::detail
