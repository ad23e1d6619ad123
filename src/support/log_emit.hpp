// Hands one record to a log_sink, the way every service of zklock does: only up
// to the sink's level, and a sink that throws is ignored (it runs inside I/O
// callbacks that cannot take an exception).
#pragma once

#include <zklock/log.hpp>

#include <cstdint>
#include <string_view>

namespace zklock::detail {

/// Delivers {level, source, message, session_id} to `sink` when it has a
/// callback and `level` is within the sink's.
inline void emit(const log_sink& sink, log_level level, std::string_view source, std::string_view message,
                 std::int64_t session_id = 0) noexcept {
    if (!sink.callback || level == log_level::none || level > sink.level) return;
    try {
        sink.callback(log_record{level, source, message, session_id});
    } catch (...) {
        // A sink must not throw; the record is dropped.
    }
}

} // namespace zklock::detail
