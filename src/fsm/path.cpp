#include "fsm/path.hpp"
#include <zklock/error.hpp>

#include <cstdint>

namespace zklock::detail {
namespace {

check_result refuse(std::string reason) {
    return {make_error_code(errc::invalid_path), std::move(reason)};
}

// Decodes one UTF-8 sequence at s[i]; returns its length, 0 if malformed.
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    if (b0 < 0x80) { cp = b0; return 1; }
    if ((b0 & 0xE0) == 0xC0) { cp = b0 & 0x1F; len = 2; }
    else if ((b0 & 0xF0) == 0xE0) { cp = b0 & 0x0F; len = 3; }
    else if ((b0 & 0xF8) == 0xF0) { cp = b0 & 0x07; len = 4; }
    else return 0;
    if (i + len > s.size()) return 0;
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr std::uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || cp > 0x10FFFF) return 0;  // overlong or out of range
    return len;
}

// The server (PathUtils.validatePath) checks UTF-16 code units: a code point
// outside the Basic Multilingual Plane is a surrogate pair there, in the
// refused range U+D800-U+F8FF.
bool refused_code_point(std::uint32_t cp) {
    return cp <= 0x1F || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0xD800 && cp <= 0xF8FF) || cp >= 0xFFF0;
}

} // namespace

check_result validate_lock_path(std::string_view path) {
    if (path.empty()) return refuse("lock path is empty");
    if (path.front() != '/') return refuse("lock path must be absolute (start with '/')");
    if (path == "/") return refuse("the root '/' cannot be a lock path");
    if (path.size() > max_lock_path_length)
        return refuse("lock path is longer than " + std::to_string(max_lock_path_length) + " bytes");
    if (path.back() == '/') return refuse("lock path must not end with '/'");

    for (std::size_t i = 0; i < path.size();) {
        std::uint32_t cp = 0;
        const std::size_t len = decode_utf8(path, i, cp);
        if (len == 0) return refuse("lock path is not valid UTF-8 (byte " + std::to_string(i) + ")");
        if (refused_code_point(cp))
            return refuse(cp > 0xFFFF ? "lock path holds a character outside the Basic Multilingual Plane (the server refuses "
                                          "it) at byte " + std::to_string(i)
                                        : "lock path holds a control or reserved character at byte " + std::to_string(i));
        i += len;
    }

    std::size_t start = 1;
    while (start <= path.size()) {
        const std::size_t end = std::min(path.find('/', start), path.size());
        const std::string_view segment = path.substr(start, end - start);
        if (segment.empty()) return refuse("lock path holds an empty segment ('//')");
        if (segment == "." || segment == "..") return refuse("lock path holds a '.' or '..' segment");
        start = end + 1;
    }

    if (path == "/zookeeper" || path.starts_with("/zookeeper/"))
        return refuse("'/zookeeper' is reserved by the server");
    return {};
}

std::vector<std::string> ancestors(std::string_view path) {
    std::vector<std::string> out;
    for (std::size_t pos = path.find('/', 1); pos != std::string_view::npos; pos = path.find('/', pos + 1))
        out.emplace_back(path.substr(0, pos));
    return out;
}

std::string child_path(std::string_view dir, std::string_view child) {
    std::string path;
    path.reserve(dir.size() + 1 + child.size());
    path.append(dir).append(1, '/').append(child);
    return path;
}

} // namespace zklock::detail
