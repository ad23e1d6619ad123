// The ZooKeeper C client's log lines, taken apart (pure; unit-tested).
#pragma once

#include <zklock/log.hpp>

#include <optional>
#include <string_view>

namespace zklock::detail {

/// A C-client log line: its level and the message without the prefix.
struct client_log_line {
    log_level level = log_level::info;
    std::string_view message;
};

/// Parses the C client's format, "TIME:PID(0xTID):ZOO_LEVEL@FUNCTION@LINE: MESSAGE"
/// (a trailing newline taken off). nullopt when the line has no ZOO_ level.
std::optional<client_log_line> parse_client_log(std::string_view line);

} // namespace zklock::detail
