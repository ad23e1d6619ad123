#include "fsm/client_log.hpp"

#include <array>
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

} // namespace zklock::detail
