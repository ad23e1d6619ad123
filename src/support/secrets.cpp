#include "support/secrets.hpp"

#include <cctype>
#include <vector>

namespace zklock::detail {
namespace {

bool blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool matches_at(std::string_view s, std::size_t i, std::string_view word) {
    if (s.size() - i < word.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k)
        if (lower(s[i + k]) != word[k]) return false;
    return true;
}

/// End of a value that starts at i: past the closing quote of a quoted one,
/// else at the next blank; a backslash escapes the next character.
std::size_t value_end(std::string_view s, std::size_t i) {
    if (i < s.size() && (s[i] == '\'' || s[i] == '"')) {
        const char quote = s[i];
        for (std::size_t k = i + 1; k < s.size(); ++k) {
            if (s[k] == '\\') ++k;
            else if (s[k] == quote) return k + 1;
        }
        return s.size();
    }
    std::size_t k = i;
    while (k < s.size() && !blank(s[k])) k += s[k] == '\\' ? 2 : 1;
    return std::min(k, s.size());
}

/// Where the userinfo that starts at i (just past "://") ends: its last '@'
/// before the next blank or the next "://"; npos when there is none.
std::size_t userinfo_end(std::string_view s, std::size_t i) {
    std::size_t limit = i;
    while (limit < s.size() && !blank(s[limit]) && s.compare(limit, 3, "://") != 0) ++limit;
    const auto at = s.substr(i, limit - i).rfind('@');
    return at == std::string_view::npos ? std::string_view::npos : i + at;
}


/// A libpq value (quoted or not) without its quoting; nullopt: unterminated quote.
std::optional<std::string> unquote(std::string_view v) {
    std::string out;
    const bool quoted = !v.empty() && v.front() == '\'';
    std::size_t i = quoted ? 1 : 0;
    for (; i < v.size(); ++i) {
        if (v[i] == '\\' && i + 1 < v.size()) {
            out += v[++i];
        } else if (quoted && v[i] == '\'') {
            return i + 1 == v.size() ? std::optional<std::string>(out) : std::nullopt;
        } else {
            out += v[i];
        }
    }
    if (quoted) return std::nullopt;
    return out;
}

std::optional<conninfo_split> split_uri(std::string_view uri, std::size_t after_scheme) {
    conninfo_split out;
    out.conninfo = std::string(uri.substr(0, after_scheme));
    auto rest = uri.substr(after_scheme);
    // As libpq: the userinfo ends at the first '@' before any '/'.
    const auto stop = rest.find_first_of("@/");
    if (stop != std::string_view::npos && rest[stop] == '@') {
        const auto userinfo = rest.substr(0, stop);
        const auto colon = userinfo.find(':');
        if (colon != std::string_view::npos) {
            const auto pw = percent_decode(userinfo.substr(colon + 1));
            if (!pw) return std::nullopt;
            out.password = *pw;
            out.conninfo += std::string(userinfo.substr(0, colon)) + "@";
        } else {
            out.conninfo += std::string(userinfo) + "@";
        }
        rest = rest.substr(stop + 1);
    }
    const auto question = rest.find('?');
    out.conninfo += std::string(rest.substr(0, question));
    if (question == std::string_view::npos) return out;
    std::string kept;
    auto query = rest.substr(question + 1);
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto param = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        const auto eq = param.find('=');
        const auto key = percent_decode(param.substr(0, eq));
        if (!key) return std::nullopt;
        if (*key == "password") {
            const auto pw = percent_decode(eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1));
            if (!pw) return std::nullopt;
            out.password = *pw;
            continue;
        }
        if (key->size() > 8 && key->ends_with("password")) return std::nullopt;
        kept += (kept.empty() ? "" : "&") + std::string(param);
    }
    if (!kept.empty()) out.conninfo += "?" + kept;
    return out;
}

} // namespace

std::string redact_secrets(std::string_view s) {
    std::string out;
    std::size_t i = 0;
    while (i < s.size()) {
        if (s.compare(i, 3, "://") == 0) {
            out += "://";
            i += 3;
            const auto at = userinfo_end(s, i);
            if (at == std::string_view::npos) continue;
            const auto userinfo = s.substr(i, at - i);
            const auto colon = userinfo.find(':');
            if (colon == std::string_view::npos) continue;  // a user alone: no secret
            out += std::string(userinfo.substr(0, colon + 1)) + std::string(redacted);
            i = at;  // the '@' and what follows are copied as they come
            continue;
        }
        if (matches_at(s, i, "password")) {
            std::size_t k = i + 8;
            while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
            if (k < s.size() && s[k] == '=') {
                ++k;
                while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
                out += std::string(s.substr(i, k - i));
                const auto end = value_end(s, k);
                if (end > k) {
                    const bool quoted = s[k] == '\'' || s[k] == '"';
                    if (quoted) out += s[k];
                    out += redacted;
                    if (quoted) out += s[k];
                }
                i = end;
                continue;
            }
        }
        out += s[i++];
    }
    return out;
}

std::optional<conninfo_split> split_conninfo_password(std::string_view conninfo) {
    for (const std::string_view scheme : {"postgresql://", "postgres://"})
        if (conninfo.starts_with(scheme)) return split_uri(conninfo, scheme.size());
    conninfo_split out;
    std::size_t i = 0;
    while (true) {
        while (i < conninfo.size() && blank(conninfo[i])) ++i;
        if (i == conninfo.size()) break;
        const auto key_start = i;
        while (i < conninfo.size() && conninfo[i] != '=' && !blank(conninfo[i])) ++i;
        const auto key = conninfo.substr(key_start, i - key_start);
        while (i < conninfo.size() && blank(conninfo[i])) ++i;
        if (i == conninfo.size() || conninfo[i] != '=') return std::nullopt;
        ++i;
        while (i < conninfo.size() && blank(conninfo[i])) ++i;
        const auto value_start = i;
        if (i < conninfo.size() && conninfo[i] == '\'') {
            ++i;
            while (i < conninfo.size() && conninfo[i] != '\'') i += conninfo[i] == '\\' ? 2 : 1;
            if (i >= conninfo.size()) return std::nullopt;
            ++i;
        } else {
            while (i < conninfo.size() && !blank(conninfo[i])) i += conninfo[i] == '\\' ? 2 : 1;
            i = std::min(i, conninfo.size());
        }
        const auto value = conninfo.substr(value_start, i - value_start);
        if (key == "password") {
            const auto pw = unquote(value);
            if (!pw) return std::nullopt;
            out.password = *pw;
            continue;
        }
        if (key.size() > 8 && key.ends_with("password")) return std::nullopt;
        out.conninfo += (out.conninfo.empty() ? "" : " ") + std::string(conninfo.substr(key_start, i - key_start));
    }
    return out;
}

std::optional<std::string> pgpass_line(std::string_view password) {
    std::string line = "*:*:*:*:";
    for (const char c : password) {
        if (c == '\n' || c == '\r') return std::nullopt;
        if (c == '\\' || c == ':') line += '\\';
        line += c;
    }
    return line + "\n";
}

namespace {
int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

} // namespace

std::optional<std::string> percent_decode(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        if (i + 2 >= s.size()) return std::nullopt;
        const int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

} // namespace zklock::detail
