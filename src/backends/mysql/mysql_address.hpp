// Where a MySQL-protocol lock service connects, parsed without any I/O from
// "mysql://[user[:password]@]host[:port][/database][?ssl_mode=M&ssl_ca=F...]"
// (also "mariadb://") or the key=value form "host=H port=P user=U password=W
// database=D socket=S ssl_mode=M ssl_ca=F ssl_cert=F ssl_key=F".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace zklock::detail::mysql {

/// How a connection uses TLS (the key ssl_mode, MySQL's --ssl-mode names).
enum class tls_mode {
    disabled,         ///< no TLS (the default without any ssl_ key)
    required,         ///< TLS, the server's certificate not checked (but against an ssl_ca given)
    verify_ca,        ///< TLS, the certificate's chain checked against ssl_ca
    verify_identity,  ///< also its host name (the default once a file is given)
};

struct mysql_address {
    std::string host = "127.0.0.1";
    std::uint16_t port = 3306;
    std::string user;
    std::string password;  ///< never printed: endpoint() leaves it out
    std::string database = "zklock";
    std::string socket;    ///< a Unix socket path: then host and port are not used
    tls_mode tls = tls_mode::disabled;
    std::string ssl_ca;    ///< PEM file of the CA certificates (empty: the system's)
    std::string ssl_cert;  ///< PEM file of the client certificate, with ssl_key
    std::string ssl_key;   ///< PEM file of its private key

    /// "host:port" or the socket path: what logs and errors name.
    std::string endpoint() const;
    friend bool operator==(const mysql_address&, const mysql_address&) = default;
};

/// Parses `text`; sets `ec` to errc::invalid_argument (and `reason`, which
/// never holds the password) when it cannot be read: an unknown key, a port
/// that is no number in 1..65535, a bad percent escape, an empty host, an
/// ssl_mode that is none of disabled, required, verify_ca, verify_identity
/// (any case), verify_ca without ssl_ca, disabled with a file. With a file
/// and no ssl_mode, the mode is verify_identity.
mysql_address parse_mysql_address(std::string_view text, std::error_code& ec, std::string* reason = nullptr);

/// parse_mysql_address(text), completed from the service's options: `user`
/// and `password` apply when the text names none.
mysql_address resolve_mysql_address(std::string_view text, const std::string& user, const std::string& password,
                                    std::error_code& ec, std::string* reason = nullptr);

} // namespace zklock::detail::mysql
