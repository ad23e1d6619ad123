// Where a Redis server is and who to be there: "host:port" or
// "redis://[user:password@]host[:port][/db]", parsed without any I/O, and the
// meaning of the error replies that concern authentication. Used by the Redis
// and Redlock backends (every connection authenticates with what this yields)
// and by `zklock bench`.
#pragma once


#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace zklock::detail {

/// A Redis server and the credentials a connection to it presents.
struct redis_address {
    std::string host;      ///< without the brackets of an IPv6 literal
    int port = 6379;
    std::string user;      ///< ACL user (Redis 6+); empty: none (AUTH with the password alone)
    std::string password;  ///< empty: no AUTH
    int db = 0;            ///< SELECT db when not 0
    bool has_credentials() const noexcept { return !password.empty(); }
    friend bool operator==(const redis_address&, const redis_address&) = default;
};

/// Parses `text`:
///   host:port                                  plain (the port is required)
///   redis://[[user]:password@]host[:port][/db] a URL (default port 6379, db 0)
/// In the URL, user and password are percent-decoded (%40 is '@', %3A ':') and
/// split at the first ':' of the part before the last '@'; an empty user
/// ("redis://:secret@h") authenticates with the password alone (requirepass).
/// An IPv6 host is written in brackets ("[::1]:6379").
/// Errors: errc::invalid_argument, with a reason that never quotes the
/// credentials (a URL with userinfo is shown with it replaced by "***"), for a
/// missing host or port, a port outside 1..65535, a db that is not a number in
/// 0..2147483647, userinfo without ':' (a user with no password), a bad
/// percent escape, "rediss://" (TLS: hiredis 0.14 has none), or a query string.
redis_address parse_redis_address(std::string_view text, std::error_code& ec, std::string* reason = nullptr);

/// parse_redis_address(text), completed from the service's options where the
/// text names nothing: `user` and `password` when it has no credentials, `db`
/// when it names no database (a URL's "/N" wins, even "/0"). Errors as
/// parse_redis_address.
redis_address resolve_redis_address(std::string_view text, const std::string& user, const std::string& password,
                                     int db, std::error_code& ec, std::string* reason = nullptr);

/// The commands a new connection sends before anything else: AUTH (with the
/// user when there is one: "AUTH user password", Redis 6+; else "AUTH password")
/// when there is a password, then SELECT when db is not 0. Empty when neither.
std::vector<std::vector<std::string>> redis_setup_commands(const redis_address& a);

/// What an error reply means (`reply` is its text, e.g. "WRONGPASS invalid
/// username-password pair or user is disabled."):
///   WRONGPASS, "ERR invalid password", "ERR AUTH ... without any password
///   configured" (a password the server does not expect)  errc::auth_failed
///   NOAUTH (no AUTH sent to a server that wants one), NOPERM (the user may not
///   run the command or touch the key)                     errc::no_auth
///   "ERR DB index is out of range" (SELECT)               errc::invalid_argument
///   anything else (a script error, ...)                   std::errc::protocol_error
std::error_code redis_error_code(std::string_view reply);

} // namespace zklock::detail
