// How the backends name a server in their log records: host:port, an IPv6
// host in brackets, never with credentials.
#pragma once

#include <string>
#include <string_view>

namespace zklock::detail {

/// "host:port", or "[host]:port" when the host is an IPv6 literal.
inline std::string endpoint_text(std::string_view host, std::string_view port) {
    std::string out;
    const bool v6 = host.find(':') != std::string_view::npos;
    out.reserve(host.size() + port.size() + 3);
    if (v6) out += '[';
    out += host;
    if (v6) out += ']';
    out += ':';
    out += port;
    return out;
}

} // namespace zklock::detail
