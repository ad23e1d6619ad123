#include "backends/sql/sql_steps.hpp"

#include <charconv>
#include <cstdio>

namespace zklock::detail::sql_steps {

renewal after_renewal(bool failed, std::uint64_t matched) noexcept {
    if (failed) return renewal::retry_soon;
    if (matched == 0) return renewal::lost;
    return renewal::extended;
}

bool lives_by_ttl(method m) noexcept { return m == method::lease || m == method::version; }

std::int64_t token_of(std::optional<std::string_view> value) noexcept {
    if (!value || value->empty()) return 0;
    std::int64_t v = 0;
    const auto end = value->data() + value->size();
    const auto res = std::from_chars(value->data(), end, v);
    if (res.ec != std::errc{} || res.ptr != end || v <= 0) return 0;
    return v;
}

std::string hashed_name(std::string_view name) {
    std::uint64_t h = 1469598103934665603ull;
    for (const char c : name) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

} // namespace zklock::detail::sql_steps
