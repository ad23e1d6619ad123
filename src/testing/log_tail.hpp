// The last lines of a server's log file, for the fixtures' log_tail() and
// their start-failure messages.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::testing::detail {

/// The last `lines` lines of `path` (read from its last 64 KiB), each ending in
/// '\n'; "" when the file cannot be read.
inline std::string last_lines(const std::filesystem::path& path, std::size_t lines) {
    constexpr std::streamoff window = 64 * 1024;
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff start = size > window ? size - window : 0;
    in.seekg(start);
    std::string text(static_cast<std::size_t>(size - start), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    std::vector<std::string_view> all;
    std::string_view rest(text);
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        all.push_back(rest.substr(0, nl));
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    }
    std::string out;
    for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
        out.append(all[i]);
        out += '\n';
    }
    return out;
}

} // namespace zklock::testing::detail
