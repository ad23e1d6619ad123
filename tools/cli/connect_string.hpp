// The connect string as the ZooKeeper C client reads it,
// host:port[,host:port...][/chroot], checked before blaming a server or DNS;
// and flock's `-c 'command'` told apart from it. Pure functions; unit-tested.
#pragma once

#include <string>
#include <string_view>

namespace zklock::cli {

/// Why `connect` is not a connect string the C client can use, in words
/// ("'db1' has no port (host:port)"), or empty when it is one: servers
/// host:port separated by commas (a host of letters, digits, '.', '-' and
/// '_', or an IPv6 address without brackets, as ::1:2181; a port from 1 to
/// 65535), then an optional chroot (an absolute path without empty, '.' or
/// '..' segments and no trailing '/'). Whether the hosts resolve is not its
/// business. Quoted parts are shortened().
std::string connect_string_problem(std::string_view connect);

/// True when the value of -c is a command written for flock's `-c CMD`
/// rather than a connect string: it is not one (connect_string_problem()) and
/// holds a blank or a character with a meaning to the shell (; | & $ < > ( )
/// ` ' " * ? ! { } \), none of which a connect string can hold.
bool looks_like_a_command(std::string_view value);

/// The hint for such a value: "-c is the ZooKeeper connect string
/// (host:port,...), not a command: for flock's -c 'make all' write zklock run
/// /x -- sh -c 'make all'" (`usage` "zklock run", `path` the lock path, or
/// empty for LOCK_PATH; a value or path too long to quote is written CMD or
/// LOCK_PATH).
std::string flock_command_hint(std::string_view usage, std::string_view path, std::string_view value);

} // namespace zklock::cli
