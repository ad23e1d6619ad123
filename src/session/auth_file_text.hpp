// The text of an auth file as read_auth_file() reads it, once the file has
// been opened and found private: a pure function, inline so that what links
// only the installed API (the fuzz target of auth files) reads a text exactly
// as the library does without a file.
#pragma once

#include <zklock/acl.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace zklock::detail {

/// `s` without the blanks, tabs and carriage returns around it.
inline std::string_view trim_auth_line(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

/// The entries of `content`, one parse_auth() line each (blank lines and
/// lines starting with '#' skipped). A bad line refuses the whole text, its
/// reason "auth file PATH line N: ..." (`path` names the file; the reason
/// never quotes a secret).
inline std::vector<auth_entry> parse_auth_file_text(std::string_view content, const std::string& path,
                                                    std::error_code& ec, std::string* reason = nullptr) {
    ec.clear();
    std::vector<auth_entry> out;
    std::size_t line_no = 0;
    std::size_t start = 0;
    while (start < content.size()) {
        auto end = content.find('\n', start);
        if (end == std::string_view::npos) end = content.size();
        const auto line = trim_auth_line(content.substr(start, end - start));
        start = end + 1;
        ++line_no;
        if (line.empty() || line.front() == '#') continue;
        std::string why;
        auto e = parse_auth(line, ec, &why);
        if (ec) {
            if (reason) *reason = "auth file " + path + " line " + std::to_string(line_no) + ": " + why;
            return {};
        }
        out.push_back(std::move(e));
    }
    return out;
}

} // namespace zklock::detail
