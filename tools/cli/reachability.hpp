// Why no ZooKeeper session could be established: what a plain TCP connect to
// each server of the connect string gives (refused, unreachable, no answer, or
// a listener that is not a serving ZooKeeper).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::cli {

/// The servers of a connect string, without its chroot: "a:1,b:2/app" gives {"a:1", "b:2"}.
std::vector<std::string> servers_of(std::string_view connect);

/// Connects to every server of `connect` at once (non-blocking, close-on-exec
/// sockets, closed again) and says, within `budget`, what each gave:
/// "127.0.0.1:2181: connection refused (nothing listens on that port)", one
/// clause per server, joined by "; ".
std::string probe_servers(std::string_view connect, std::chrono::milliseconds budget);

} // namespace zklock::cli
