#include "fsm/client_log.hpp"

#include <array>
#include <cerrno>
#include <string>
#include <utility>

namespace zklock::detail {

std::optional<client_log_line> parse_client_log(std::string_view line) {
    static constexpr std::array<std::pair<std::string_view, log_level>, 4> levels{{
        {"ZOO_ERROR@", log_level::error},
        {"ZOO_WARN@", log_level::warn},
        {"ZOO_INFO@", log_level::info},
        {"ZOO_DEBUG@", log_level::debug},
    }};
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    for (const auto& [tag, level] : levels) {
        const auto at = line.find(tag);
        if (at == std::string_view::npos) continue;
        auto rest = line.substr(at + tag.size());           // FUNCTION@LINE: MESSAGE
        const auto colon = rest.find(": ");
        rest = colon == std::string_view::npos ? rest : rest.substr(colon + 2);
        return client_log_line{level, rest};
    }
    return std::nullopt;
}

std::optional<std::string> refused_address(std::string_view message) {
    constexpr std::string_view prefix = "Socket ";
    constexpr std::string_view retcode = " zk retcode=";
    if (!message.starts_with(prefix)) return std::nullopt;
    message.remove_prefix(prefix.size());
    const auto end = message.find(retcode);
    if (end == std::string_view::npos || end == 0) return std::nullopt;
    const auto address = endpoint_text(message.substr(0, end));
    const auto errno_text = "errno=" + std::to_string(ECONNREFUSED) + "(";
    if (message.find(errno_text, end) == std::string_view::npos) return std::nullopt;
    return std::string(address);
}

std::string_view endpoint_text(std::string_view endpoint) {
    if (endpoint.size() >= 2 && endpoint.front() == '[' && endpoint.back() == ']' &&
        endpoint.find("]:") == std::string_view::npos)
        endpoint = endpoint.substr(1, endpoint.size() - 2);  // "[ADDRESS]" in some versions
    return endpoint;
}

} // namespace zklock::detail
