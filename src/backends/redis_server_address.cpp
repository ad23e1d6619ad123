#include <zklock/redis_address.hpp>

#include "backends/redis/redis_address.hpp"
#include <zklock/error.hpp>

#include <system_error>

namespace zklock {

RedisServerAddress parse_redis_address(std::string_view text) {
    std::error_code ec;
    std::string reason;
    const auto parsed = detail::parse_redis_address(text, ec, &reason);
    if (ec) throw error(ec, reason);
    return {parsed.host, parsed.port, parsed.user, parsed.db, parsed.has_credentials()};
}

} // namespace zklock
