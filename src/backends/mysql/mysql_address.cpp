#include "backends/mysql/mysql_address.hpp"

#include "support/endpoint_text.hpp"
#include "support/secrets.hpp"

#include <zklock/error.hpp>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace zklock::detail::mysql {
namespace {

std::optional<std::uint16_t> parse_port(std::string_view s) {
    if (s.empty() || s.size() > 5) return std::nullopt;
    unsigned v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    if (v == 0 || v > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(v);
}

mysql_address fail(std::error_code& ec, std::string* reason, std::string why) {
    ec = make_error_code(errc::invalid_argument);
    if (reason) *reason = std::move(why);
    return {};
}

// The TLS keys, in both forms: false when `key` is none of them.
bool tls_key(mysql_address& a, std::string_view key, const std::string& value, std::optional<tls_mode>& mode,
             std::string& why) {
    if (key == "ssl_ca") a.ssl_ca = value;
    else if (key == "ssl_cert") a.ssl_cert = value;
    else if (key == "ssl_key") a.ssl_key = value;
    else if (key == "ssl_mode") {
        std::string v;
        for (const char c : value) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (v == "disabled") mode = tls_mode::disabled;
        else if (v == "required") mode = tls_mode::required;
        else if (v == "verify_ca") mode = tls_mode::verify_ca;
        else if (v == "verify_identity") mode = tls_mode::verify_identity;
        else why = "ssl_mode is one of disabled, required, verify_ca, verify_identity";
    } else {
        return false;
    }
    return true;
}

// The mode once every key is read: verify_identity for a file without a mode.
mysql_address settle_tls(mysql_address a, std::optional<tls_mode> mode, std::error_code& ec, std::string* reason) {
    const bool files = !a.ssl_ca.empty() || !a.ssl_cert.empty() || !a.ssl_key.empty();
    a.tls = mode ? *mode : files ? tls_mode::verify_identity : tls_mode::disabled;
    if (a.tls == tls_mode::disabled && files) return fail(ec, reason, "ssl_mode=disabled with an ssl_ca, ssl_cert or ssl_key");
    if (a.tls == tls_mode::verify_ca && a.ssl_ca.empty()) return fail(ec, reason, "ssl_mode=verify_ca needs ssl_ca");
    return a;
}

// A URL's "?key=value&...": the TLS keys only.
bool url_parameters(mysql_address& a, std::string_view query, std::optional<tls_mode>& mode, std::string& why) {
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto param = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        const auto eq = param.find('=');
        const auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1));
        if (eq == std::string_view::npos || !value) {
            why = "a bad parameter (?ssl_mode=M&ssl_ca=FILE&ssl_cert=FILE&ssl_key=FILE)";
            return false;
        }
        if (!tls_key(a, param.substr(0, eq), *value, mode, why)) {
            why = "an unknown parameter (a mysql:// address takes ssl_mode, ssl_ca, ssl_cert, ssl_key)";
            return false;
        }
        if (!why.empty()) return false;
    }
    return true;
}

mysql_address parse_url(std::string_view rest, std::error_code& ec, std::string* reason) {
    mysql_address a;
    std::optional<tls_mode> mode;
    // The parameters start at the first '?' after the authority (whose
    // password may hold one): after the path's '/', or the userinfo's '@'.
    const auto path = rest.find('/');
    const auto at = rest.substr(0, path).rfind('@');
    const auto from = path != std::string_view::npos ? path : at != std::string_view::npos ? at + 1 : 0;
    if (const auto q = rest.find('?', from); q != std::string_view::npos) {
        std::string why;
        if (!url_parameters(a, rest.substr(q + 1), mode, why)) return fail(ec, reason, why);
        rest = rest.substr(0, q);
    }
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        auto db = rest.substr(slash + 1);
        if (!db.empty()) {
            auto decoded = percent_decode(db);
            if (!decoded) return fail(ec, reason, "a bad percent escape in the database name");
            a.database = *decoded;
        }
    }
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
        const auto userinfo = authority.substr(0, at);
        authority = authority.substr(at + 1);
        const auto colon = userinfo.find(':');
        auto user = percent_decode(userinfo.substr(0, colon));
        if (!user) return fail(ec, reason, "a bad percent escape in the user name");
        a.user = *user;
        if (colon != std::string_view::npos) {
            auto password = percent_decode(userinfo.substr(colon + 1));
            if (!password) return fail(ec, reason, "a bad percent escape in the password");
            a.password = *password;
        }
    }
    std::string_view host = authority;
    if (!host.empty() && host.front() == '[') {  // [v6]:port
        const auto close = host.find(']');
        if (close == std::string_view::npos) return fail(ec, reason, "an IPv6 address without ']'");
        const auto after = host.substr(close + 1);
        host = host.substr(1, close - 1);
        if (!after.empty()) {
            if (after.front() != ':') return fail(ec, reason, "text after the IPv6 address");
            const auto port = parse_port(after.substr(1));
            if (!port) return fail(ec, reason, "the port is not a number in 1..65535");
            a.port = *port;
        }
    } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
        const auto port = parse_port(host.substr(colon + 1));
        if (!port) return fail(ec, reason, "the port is not a number in 1..65535");
        a.port = *port;
        host = host.substr(0, colon);
    }
    if (host.empty()) return fail(ec, reason, "no host");
    a.host = std::string(host);
    return settle_tls(std::move(a), mode, ec, reason);
}

// A key: a word of letters, digits and '_'. Anything else before an '=' is
// the rest of a value with a blank in it ("password=my secret host=h" gives
// "secret host"). No refusal quotes a key but a known one: after a password
// with a blank even a word may be part of it ("password=my secret=x" gives
// "secret").
bool word(std::string_view key) {
    const auto word_character = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    return !key.empty() && std::all_of(key.begin(), key.end(), word_character);
}

mysql_address parse_pairs(std::string_view text, std::error_code& ec, std::string* reason) {
    mysql_address a;
    std::optional<tls_mode> mode;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        if (i == text.size()) break;
        const auto eq = text.find('=', i);
        if (eq == std::string_view::npos) return fail(ec, reason, "a key without '=' (key=value form)");
        const std::string key(text.substr(i, eq - i));
        if (!word(key))
            return fail(ec, reason, "a value with a blank or a key that is no word (write a blank in a value as %20)");
        std::size_t end = eq + 1;
        while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
        auto value = percent_decode(text.substr(eq + 1, end - eq - 1));
        if (!value) {
            constexpr std::string_view keys[] = {"host",   "port",   "user",     "password", "database", "dbname",
                                                 "socket", "ssl_ca", "ssl_cert", "ssl_key",  "ssl_mode"};
            const bool known = std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
            return fail(ec, reason, known ? "a bad percent escape in '" + key + "'" : "a bad percent escape in a value");
        }
        if (key == "host") a.host = *value;
        else if (key == "port") {
            const auto port = parse_port(*value);
            if (!port) return fail(ec, reason, "the port is not a number in 1..65535");
            a.port = *port;
        } else if (key == "user") a.user = *value;
        else if (key == "password") a.password = *value;
        else if (key == "database" || key == "dbname") a.database = *value;
        else if (key == "socket") a.socket = *value;
        else {
            std::string why;
            if (!tls_key(a, key, *value, mode, why))
                return fail(ec, reason,
                            "an unknown key (the keys are host, port, user, password, database, socket, ssl_mode, "
                            "ssl_ca, ssl_cert, ssl_key)");
            if (!why.empty()) return fail(ec, reason, why);
        }
        i = end;
    }
    if (a.host.empty() && a.socket.empty()) return fail(ec, reason, "no host");
    return settle_tls(std::move(a), mode, ec, reason);
}

} // namespace

std::string mysql_address::endpoint() const { return socket.empty() ? endpoint_text(host, std::to_string(port)) : socket; }

mysql_address parse_mysql_address(std::string_view text, std::error_code& ec, std::string* reason) {
    ec.clear();
    for (const std::string_view scheme : {"mysql://", "mariadb://"})
        if (text.substr(0, scheme.size()) == scheme) return parse_url(text.substr(scheme.size()), ec, reason);
    if (text.find("://") != std::string_view::npos)
        return fail(ec, reason, "an address is mysql://... or key=value pairs");
    if (text.find('=') == std::string_view::npos) return parse_url(text, ec, reason);  // host[:port]
    return parse_pairs(text, ec, reason);
}

mysql_address resolve_mysql_address(std::string_view text, const std::string& user, const std::string& password,
                                    std::error_code& ec, std::string* reason) {
    auto a = parse_mysql_address(text, ec, reason);
    if (ec) return a;
    if (a.user.empty()) a.user = user;
    if (a.password.empty()) a.password = password;
    return a;
}

} // namespace zklock::detail::mysql
