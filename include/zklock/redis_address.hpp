// zklock::parse_redis_address: a Redis server address read the way the Redis
// and Redlock backends and RedisFence read it, for programs that check an
// operator's address before they connect or hand its server to other tools
// (redis-cli, redis-benchmark). Target zklock::backends, so it is there in
// builds without the Redis backend too.
#pragma once

#include <zklock/backends_export.hpp>

#include <string>
#include <string_view>

namespace zklock {

/// A Redis server address, without its password (a program that needs the
/// password hands the whole address to the backend, which reads it itself).
struct RedisServerAddress {
    std::string host;           ///< without the brackets of an IPv6 literal
    int port = 6379;            ///< the address's, or 6379 for a URL without one
    std::string user;           ///< the URL's ACL user; empty: none
    int db = 0;                 ///< the URL's "/N"; 0 when it names none
    bool has_password = false;  ///< the URL carries a password
    /// Field by field.
    friend bool operator==(const RedisServerAddress&, const RedisServerAddress&) = default;
};

/// Parses "host:port" (the port required) or "redis://[[user]:password@]host
/// [:port][/db]" (user and password percent-decoded), an IPv6 host in
/// brackets. Throws zklock::error(errc::invalid_argument), with a message
/// that never quotes the credentials, for a missing host or port, a port
/// outside 1..65535, a database that is not a number, userinfo without ':',
/// a bad percent escape, "rediss://" (Debian's hiredis has no TLS) or a query
/// string.
ZKLOCK_BACKENDS_EXPORT RedisServerAddress parse_redis_address(std::string_view text);

} // namespace zklock
