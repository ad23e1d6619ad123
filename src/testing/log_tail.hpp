// The last lines of a server's log file, for the fixtures' log_tail() and
// their start-failure messages.
#pragma once

#include "support/cloexec_file.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::testing::detail {

/// The last `lines` lines of `path` (read from its last 64 KiB), each ending in
/// '\n'; "" when the file cannot be read.
inline std::string last_lines(const std::filesystem::path& path, std::size_t lines) {
    const std::string text = read_file_cloexec(path, 64 * 1024);
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
