// The JSON lines a `zklock bench` or `zklock status --json` run prints (its
// notes on stderr are plain text).
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace zklock::test {

/// Every line of `out` that is a JSON object, parsed (throws on a malformed one).
inline std::vector<nlohmann::json> json_lines(const std::string& out) {
    std::vector<nlohmann::json> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("{")) lines.push_back(nlohmann::json::parse(line));
    return lines;
}

/// The last JSON line of `out`; null when there is none.
inline nlohmann::json last_json_line(const std::string& out) {
    auto lines = json_lines(out);
    return lines.empty() ? nlohmann::json() : std::move(lines.back());
}

} // namespace zklock::test
