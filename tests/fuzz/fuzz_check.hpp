// What the fuzz targets share: a failed property aborts with its name (the
// fuzzer then keeps the input that broke it), and the splitting of an input
// into the lines or words a target feeds its parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::fuzz {

/// Aborts with "property failed: WHAT (DETAIL)" unless `holds`.
inline void check(bool holds, const char* what, std::string_view detail = {}) {
    if (holds) return;
    std::fprintf(stderr, "property failed: %s", what);
    if (!detail.empty()) std::fprintf(stderr, " (%.*s)", static_cast<int>(detail.size()), detail.data());
    std::fputc('\n', stderr);
    std::abort();
}

/// The input as text.
inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// `text` split at every `sep` (empty parts kept; one part for a text without it).
inline std::vector<std::string> split(std::string_view text, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const auto at = text.find(sep, start);
        out.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos) return out;
        start = at + 1;
    }
}

/// True when `text` holds `part` (an empty part is in every text).
inline bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

/// True when `text` holds a C0 control character or DEL: what a message that
/// goes to a terminal must have escaped.
inline bool has_control(std::string_view text) {
    for (const char c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
    return false;
}

} // namespace zklock::fuzz
