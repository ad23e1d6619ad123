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

/// The lines of `text`, without their '\n'.
inline std::vector<std::string_view> split_lines(std::string_view rest) {
    std::vector<std::string_view> all;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        all.push_back(rest.substr(0, nl));
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    }
    return all;
}

/// The last `lines` lines of `path` (read from its last 64 KiB), each ending in
/// '\n'; "" when the file cannot be read.
inline std::string last_lines(const std::filesystem::path& path, std::size_t lines) {
    const std::string text = read_file_cloexec(path, 64 * 1024);
    const auto all = split_lines(text);
    std::string out;
    for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
        out.append(all[i]);
        out += '\n';
    }
    return out;
}

/// The lines of `path` (its last 64 KiB) that name an error ("ERROR", as
/// MariaDB and PostgreSQL write them, or "[Error]") before its last `tail`
/// lines, at most `most` of them: a tool that prints pages of help after
/// its error (mariadb-install-db) hides the cause from last_lines().
inline std::string error_lines_before_tail(const std::filesystem::path& path, std::size_t tail, std::size_t most) {
    const std::string text = read_file_cloexec(path, 64 * 1024);
    const auto all = split_lines(text);
    std::string out;
    std::size_t n = 0;
    for (std::size_t i = 0; i + tail < all.size() && n < most; ++i) {
        if (all[i].find("ERROR") == std::string_view::npos && all[i].find("[Error]") == std::string_view::npos) continue;
        out.append(all[i]);
        out += '\n';
        ++n;
    }
    return out;
}

} // namespace zklock::testing::detail
