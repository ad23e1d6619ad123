// Why no ZooKeeper session could be established: the hosts that do not
// resolve, and what a plain TCP connect to each server of the connect string
// gives (refused, unreachable, no answer, or a listener that is not a serving
// ZooKeeper).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zklock::cli {

/// A server of a connect string as host and port, split at the last colon as
/// the C client does (an IPv6 address keeps its own; "[::1]:2181" loses its
/// brackets); port "2181" when it has none.
std::pair<std::string, std::string> host_and_port(const std::string& server);

/// The servers of a connect string, without its chroot: "a:1,b:2/app" gives {"a:1", "b:2"}.
std::vector<std::string> servers_of(std::string_view connect);

/// The hosts of `connect` that do not resolve (getaddrinfo), each with why:
/// "nosuchhost.invalid (Name or service not known)". Empty when every one does.
/// A failed lookup is a name nobody knows or a DNS that does not answer
/// ("Temporary failure in name resolution"): not a typo in the connect string.
std::vector<std::string> unresolved_hosts(std::string_view connect);

/// Connects to every server of `connect` at once (non-blocking, close-on-exec
/// sockets, closed again) and says, within `budget`, what each gave:
/// "127.0.0.1:2181: connection refused (nothing listens on that port)", one
/// clause per server, joined by "; ".
std::string probe_servers(std::string_view connect, std::chrono::milliseconds budget);

} // namespace zklock::cli
