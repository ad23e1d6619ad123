// The public face of support/secrets.hpp (zklock/secrets.hpp).
#include <zklock/secrets.hpp>

#include "support/secrets.hpp"

#include <utility>

namespace zklock {

std::string redact_secrets(std::string_view text) { return detail::redact_secrets(text); }

std::optional<conninfo_split> split_conninfo_password(std::string_view conninfo) {
    auto split = detail::split_conninfo_password(conninfo);
    if (!split) return std::nullopt;
    return conninfo_split{std::move(split->conninfo), std::move(split->password)};
}

std::optional<std::string> pgpass_line(std::string_view password) { return detail::pgpass_line(password); }

} // namespace zklock
