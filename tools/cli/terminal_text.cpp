#include "terminal_text.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace zklock::cli {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

void append_byte_escape(std::string& out, unsigned char c) {
    out += "\\x";
    out += hex_digits[c >> 4];
    out += hex_digits[c & 0xf];
}

void append_code_point_escape(std::string& out, std::uint32_t cp) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex_digits[(cp >> shift) & 0xf];
}

// The length of the valid UTF-8 sequence at the start of `s` and its code
// point; 0 when it is not valid (truncated, overlong, a surrogate, beyond U+10FFFF).
std::size_t decode_utf8(std::string_view s, std::uint32_t& cp) {
    const auto b0 = static_cast<unsigned char>(s[0]);
    std::size_t len = 0;
    std::uint32_t min = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
        len = 2;
        cp = b0 & 0x1f;
        min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
        len = 3;
        cp = b0 & 0x0f;
        min = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        len = 4;
        cp = b0 & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (s.size() < len) return 0;
    for (std::size_t i = 1; i < len; ++i) {
        const auto b = static_cast<unsigned char>(s[i]);
        if ((b & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

bool reorders_or_breaks(std::uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

// The character at the start of `s` as escape_control() shows it: its length
// in bytes (a valid UTF-8 sequence, or one byte) and, in `cost`, the columns
// its escaped form takes as columns() counts them.
std::size_t escaped_unit(std::string_view s, std::size_t& cost) {
    const auto c = static_cast<unsigned char>(s[0]);
    if (c < 0x80) {
        cost = (c == '\\' || c == '\n' || c == '\r' || c == '\t') ? 2 : (c < 0x20 || c == 0x7f) ? 4 : 1;
        return 1;
    }
    std::uint32_t cp = 0;
    const auto len = decode_utf8(s, cp);
    if (len == 0) {
        cost = 4;  // \xHH
        return 1;
    }
    cost = reorders_or_breaks(cp) ? 6 : 1;  // \uHHHH, or the character itself
    return len;
}

} // namespace

std::string escape_control(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            switch (c) {
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7f) append_byte_escape(out, c);
                else out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        std::uint32_t cp = 0;
        const auto len = decode_utf8(text.substr(i), cp);
        if (len == 0) {
            append_byte_escape(out, c);
            ++i;
        } else {
            if (reorders_or_breaks(cp)) append_code_point_escape(out, cp);
            else out.append(text.substr(i, len));
            i += len;
        }
    }
    return out;
}

std::size_t columns(std::string_view text) {
    std::size_t n = 0;
    for (char c : text)
        if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) ++n;  // a byte that starts a character
    return n;
}

std::string shortened(std::string_view text, std::size_t width, keep kept) {
    // columns(escape_control(text)), counted without making the escaped text.
    std::size_t total = 0;
    for (std::size_t i = 0, cost = 0; i < text.size() && total <= width; total += cost)
        i += escaped_unit(text.substr(i), cost);
    if (total <= width) return std::string(text);
    if (width == 0) return {};
    // Whole characters (a valid UTF-8 sequence, or one byte), each with the
    // columns escape_control() shows it in; the ellipsis takes one more.
    struct unit {
        std::size_t at, len, cost;
    };
    std::vector<unit> units;
    for (std::size_t i = 0; i < text.size();) {
        std::size_t cost = 0;
        const std::size_t len = escaped_unit(text.substr(i), cost);
        units.push_back({i, len, cost});
        i += len;
    }
    std::size_t used = 0, n = 0;
    if (kept == keep::start) {
        while (n < units.size() && used + units[n].cost <= width - 1) used += units[n++].cost;
        return std::string(text.substr(0, n == units.size() ? text.size() : units[n].at)) + "\u2026";
    }
    while (n < units.size() && used + units[units.size() - 1 - n].cost <= width - 1)
        used += units[units.size() - 1 - n++].cost;
    return "\u2026" + std::string(text.substr(n == 0 ? text.size() : units[units.size() - n].at));
}

std::string shell_word(std::string_view word) {
    const auto plain = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("-_./:=@%+,").find(c) != std::string_view::npos;
    };
    bool quote = word.empty();
    for (char c : word)
        if (!plain(c)) quote = true;
    if (!quote) return std::string(word);
    // Each run between apostrophes is escaped on its own, so the '\'' that
    // stands for an apostrophe stays as the shell needs it.
    std::string out = "'";
    std::size_t start = 0;
    for (;;) {
        const auto quote_at = word.find('\'', start);
        out += escape_control(word.substr(start, quote_at == std::string_view::npos ? quote_at : quote_at - start));
        if (quote_at == std::string_view::npos) break;
        out += "'\\''";
        start = quote_at + 1;
    }
    return out + "'";
}

std::string counted(long long n, std::string_view noun, std::string_view plural) {
    std::string out = std::to_string(n) + " ";
    if (n == 1) return out.append(noun);
    if (!plural.empty()) return out.append(plural);
    return out.append(noun).append("s");
}

} // namespace zklock::cli
