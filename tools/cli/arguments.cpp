#include "arguments.hpp"

#include <algorithm>

#include "terminal_text.hpp"

#include <cstdint>

namespace zklock::cli {

parsed_duration parse_wait_duration(std::string_view text) {
    const auto refuse = [&](const std::string& why) {
        return parsed_duration{std::chrono::milliseconds(0), "'" + escape_control(text) + "' " + why};
    };
    constexpr std::uint64_t limit = static_cast<std::uint64_t>(max_wait.count());
    std::size_t i = 0;
    std::uint64_t whole = 0;
    const auto digit = [&](std::size_t at) { return at < text.size() && text[at] >= '0' && text[at] <= '9'; };
    if (!digit(0))
        return refuse("is not a duration: give milliseconds (300) or a number with a unit (1.5s, 500ms, 2m, 1h)");
    for (; digit(i); ++i) {
        whole = whole * 10 + static_cast<std::uint64_t>(text[i] - '0');
        if (whole > limit) return refuse("is too long: at most " + std::to_string(limit) + " ms");
    }
    // The fraction as a numerator over 10^digits; digits past the ninth only round up.
    std::uint64_t fraction = 0;
    std::uint64_t scale = 1;
    bool beyond = false;
    bool has_fraction = false;
    if (i < text.size() && text[i] == '.') {
        has_fraction = true;
        ++i;
        if (!digit(i)) return refuse("is not a duration: a digit must follow the '.'");
        for (; digit(i); ++i) {
            if (scale < 1'000'000'000) {
                fraction = fraction * 10 + static_cast<std::uint64_t>(text[i] - '0');
                scale *= 10;
            } else if (text[i] != '0') {
                beyond = true;
            }
        }
    }
    const auto unit = text.substr(i);
    std::uint64_t unit_ms = 0;
    if (unit.empty()) {
        if (has_fraction) return refuse("has a fraction but no unit: plain numbers are milliseconds; write 1.5s or 1500");
        unit_ms = 1;
    } else if (unit == "ms") {
        unit_ms = 1;
    } else if (unit == "s") {
        unit_ms = 1000;
    } else if (unit == "m") {
        unit_ms = 60'000;
    } else if (unit == "h") {
        unit_ms = 3'600'000;
    } else {
        return refuse("has an unknown unit '" + escape_control(unit) + "': use ms, s, m or h");
    }
    if (whole > limit / unit_ms) return refuse("is too long: at most " + std::to_string(limit) + " ms");
    // fraction * unit_ms < 10^9 * 3.6e6: fits in 64 bits.
    const std::uint64_t part = fraction * unit_ms;
    std::uint64_t ms = whole * unit_ms + part / scale;
    if (part % scale != 0 || beyond) ++ms;  // round up: a nonzero wait never becomes "do not wait"
    if (ms > limit) return refuse("is too long: at most " + std::to_string(limit) + " ms");
    return {std::chrono::milliseconds(static_cast<std::int64_t>(ms)), {}};
}

lock_path_words split_lock_paths(std::vector<std::string> words) {
    const auto separator = std::find(words.begin(), words.end(), "--");
    const bool all_paths = separator != words.end() && separator != words.begin() &&
                           std::all_of(words.begin(), separator, [](const std::string& w) { return w.starts_with('/'); });
    if (!all_paths) return {{}, std::move(words)};
    lock_path_words out;
    out.more_paths.assign(words.begin(), separator);
    out.rest.assign(separator, words.end());
    return out;
}

trailing_words split_trailing(std::vector<std::string> words) {
    trailing_words out;
    if (words.empty()) return out;
    if (words.front() == "--") {
        out.command.assign(words.begin() + 1, words.end());
        return out;
    }
    const auto& first = words.front();
    if (first.size() < 2 || first.front() != '-') {
        out.command = std::move(words);
        return out;
    }
    std::size_t i = 0;
    for (; i < words.size() && words[i] != "--"; ++i) out.misplaced.push_back(words[i]);
    if (i < words.size()) {
        out.separated = true;
        out.command.assign(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, words.end());
    }
    return out;
}

std::string misplaced_option_hint(std::string_view usage, std::string_view path_name,
                                  const std::vector<std::string>& positionals, const trailing_words& words) {
    std::string hint = "options go before " + std::string(path_name) + ": " + std::string(usage);
    if (!words.separated && !words.misplaced.empty()) {
        // Without a "--" nobody can tell where the options end and CMD begins.
        hint += " [OPTIONS]";
        for (const auto& p : positionals) hint += " " + shell_word(p);
        return hint + " -- CMD [ARGS...] (" + shell_word(words.misplaced.front()) +
               " came after " + std::string(path_name) + "; a command that starts with '-' goes after --)";
    }
    for (const auto& w : words.misplaced) hint += " " + shell_word(w);
    for (const auto& p : positionals) hint += " " + shell_word(p);
    hint += " --";
    for (const auto& w : words.command) hint += " " + shell_word(w);
    return hint;
}

} // namespace zklock::cli
