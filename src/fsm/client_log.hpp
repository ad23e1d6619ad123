// The ZooKeeper C client's log lines, taken apart (pure; unit-tested).
#pragma once

#include <zklock/log.hpp>

#include <optional>
#include <string>
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

/// The server address ("127.0.0.1:2181", "[::1]:2181") of a message that says
/// a connect to it was refused (ECONNREFUSED: nothing listens there), as the C
/// client logs it: "Socket ADDRESS zk retcode=-4, errno=111(...): server
/// refused to accept the client". nullopt for any other message.
std::optional<std::string> refused_address(std::string_view message);

/// An address as the C client writes it ("127.0.0.1:2181", "[::1]:2181"),
/// in one form: some versions put the whole of it in brackets.
std::string_view endpoint_text(std::string_view endpoint);

} // namespace zklock::detail
