// Where a MySQL-protocol lock service connects, parsed without any I/O from
// "mysql://[user[:password]@]host[:port][/database]" (also "mariadb://") or
// the key=value form "host=H port=P user=U password=W database=D socket=S".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace zklock::detail::mysql {

struct mysql_address {
    std::string host = "127.0.0.1";
    std::uint16_t port = 3306;
    std::string user;
    std::string password;  ///< never printed: endpoint() leaves it out
    std::string database = "zklock";
    std::string socket;    ///< a Unix socket path: then host and port are not used

    /// "host:port" or the socket path: what logs and errors name.
    std::string endpoint() const;
    friend bool operator==(const mysql_address&, const mysql_address&) = default;
};

/// Parses `text`; sets `ec` to errc::invalid_argument (and `reason`, which
/// never holds the password) when it cannot be read: an unknown key, a port
/// that is no number in 1..65535, a bad percent escape, an empty host.
mysql_address parse_mysql_address(std::string_view text, std::error_code& ec, std::string* reason = nullptr);

/// parse_mysql_address(text), completed from the service's options: `user`
/// and `password` apply when the text names none.
mysql_address resolve_mysql_address(std::string_view text, const std::string& user, const std::string& password,
                                    std::error_code& ec, std::string* reason = nullptr);

} // namespace zklock::detail::mysql
