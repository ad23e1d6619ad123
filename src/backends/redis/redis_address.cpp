#include "backends/redis/redis_address.hpp"
#include "support/secrets.hpp"
#include <zklock/error.hpp>

#include <climits>
#include <optional>

namespace zklock::detail {
namespace {

constexpr std::string_view url_scheme = "redis://";

std::optional<int> parse_number(std::string_view digits, long long max) {
    if (digits.empty() || digits.size() > 10) return std::nullopt;
    long long value = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + (c - '0');
    }
    if (value > max) return std::nullopt;
    return static_cast<int>(value);
}


/// `text` as an error message may show it: anything before the last '@' (the
/// userinfo, whatever its shape) masked.
std::string shown(std::string_view text) {
    const auto at = text.rfind('@');
    if (at == std::string_view::npos) return std::string(text);
    const auto scheme = text.find("://");
    const auto start = scheme != std::string_view::npos && scheme < at ? scheme + 3 : 0;
    return std::string(text.substr(0, start)) + "***" + std::string(text.substr(at));
}

/// "host:port" (port required) or "host[:port]" (port optional) with an
/// optional bracketed IPv6 host.
bool parse_host_port(std::string_view s, bool port_required, redis_address& out) {
    std::string_view host, port;
    if (s.starts_with('[')) {
        const auto close = s.find(']');
        if (close == std::string_view::npos) return false;
        host = s.substr(1, close - 1);
        const auto after = s.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return false;
            port = after.substr(1);
            if (port.empty()) return false;
        }
    } else {
        const auto colon = s.rfind(':');
        if (colon == std::string_view::npos) {
            host = s;
        } else {
            host = s.substr(0, colon);
            port = s.substr(colon + 1);
            if (port.empty()) return false;
        }
    }
    if (host.empty()) return false;
    if (port.empty()) {
        if (port_required) return false;
    } else {
        const auto p = parse_number(port, 65535);
        if (!p || *p == 0) return false;
        out.port = *p;
    }
    out.host = std::string(host);
    return true;
}

} // namespace

redis_address parse_redis_address(std::string_view text, std::error_code& ec, std::string* reason) {
    ec = {};
    const auto refuse = [&](const std::string& why) {
        ec = make_error_code(errc::invalid_argument);
        if (reason) *reason = why + " in Redis address '" + shown(text) + "'";
        return redis_address{};
    };
    redis_address a;
    for (const char c : text)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
            return refuse("a blank or control character (in a URL, write it as %XX)");
    if (text.starts_with("rediss://"))
        return refuse("TLS (rediss://) is not supported: Debian's hiredis 0.14 has no TLS");
    if (!text.starts_with(url_scheme)) {
        if (text.find("://") != std::string_view::npos) return refuse("the only URL scheme is redis://");
        if (text.find('@') != std::string_view::npos)
            return refuse("credentials need the URL form redis://user:password@host:port");
        if (!parse_host_port(text, true, a)) return refuse("expected host:port or redis://[user:password@]host:port[/db]");
        return a;
    }
    auto rest = text.substr(url_scheme.size());
    if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
        const auto userinfo = rest.substr(0, at);
        rest = rest.substr(at + 1);
        const auto colon = userinfo.find(':');
        if (colon == std::string_view::npos)
            return refuse("the userinfo of a redis:// URL is user:password or :password (a user needs its password)");
        const auto user = percent_decode(userinfo.substr(0, colon));
        const auto password = percent_decode(userinfo.substr(colon + 1));
        if (!user || !password) return refuse("a bad percent escape in the userinfo");
        if (password->empty()) return refuse("an empty password");
        a.user = *user;
        a.password = *password;
    }
    if (rest.find('?') != std::string_view::npos || rest.find('#') != std::string_view::npos)
        return refuse("a redis:// URL takes no query or fragment");
    std::string_view authority = rest, path;
    if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
        authority = rest.substr(0, slash);
        path = rest.substr(slash + 1);
    }
    if (!parse_host_port(authority, false, a)) return refuse("expected host[:port] after redis://");
    if (!path.empty()) {
        const auto db = parse_number(path, INT_MAX);
        if (!db) return refuse("the database after '/' must be a number from 0 to 2147483647");
        a.db = *db;
    }
    return a;
}

redis_address resolve_redis_address(std::string_view text, const std::string& user, const std::string& password,
                                     int db, std::error_code& ec, std::string* reason) {
    auto a = parse_redis_address(text, ec, reason);
    if (ec) return a;
    if (!a.has_credentials()) {
        a.user = user;
        a.password = password;
    }
    // Whether a redis:// URL names its db ("/N" after the host).
    constexpr std::string_view scheme = "redis://";
    bool names_db = false;
    if (text.starts_with(scheme)) {
        auto rest = text.substr(scheme.size());
        if (const auto at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
        names_db = rest.find('/') != std::string_view::npos;
    }
    if (!names_db) a.db = db;
    return a;
}

std::vector<std::vector<std::string>> redis_setup_commands(const redis_address& a) {
    std::vector<std::vector<std::string>> out;
    if (!a.password.empty()) {
        if (a.user.empty()) out.push_back({"AUTH", a.password});
        else out.push_back({"AUTH", a.user, a.password});
    }
    if (a.db != 0) out.push_back({"SELECT", std::to_string(a.db)});
    return out;
}

std::error_code redis_error_code(std::string_view reply) {
    const auto word = reply.substr(0, reply.find(' '));
    if (word == "WRONGPASS") return make_error_code(errc::auth_failed);
    if (word == "NOAUTH" || word == "NOPERM") return make_error_code(errc::no_auth);
    if (reply.starts_with("ERR invalid password") ||
        (reply.starts_with("ERR AUTH") && reply.find("without any password configured") != std::string_view::npos) ||
        reply.starts_with("ERR Client sent AUTH, but no password is set"))
        return make_error_code(errc::auth_failed);
    if (reply.starts_with("ERR") && reply.find("DB index") != std::string_view::npos)
        return make_error_code(errc::invalid_argument);  // SELECT of a db the server does not have
    return std::make_error_code(std::errc::protocol_error);
}

} // namespace zklock::detail
