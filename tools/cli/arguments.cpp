#include "arguments.hpp"

#include <algorithm>

#include "terminal_text.hpp"

#include <cstdint>

namespace zklock::cli {

parsed_duration parse_wait_duration(std::string_view text) {
    const auto refuse = [&](const std::string& why) {
        return parsed_duration{std::chrono::milliseconds(0), "'" + escape_control(shortened(text)) + "' " + why};
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
    std::string_view fraction;  // its digits
    bool has_fraction = false;
    if (i < text.size() && text[i] == '.') {
        has_fraction = true;
        const std::size_t start = ++i;
        if (!digit(i)) return refuse("is not a duration: a digit must follow the '.'");
        while (digit(i)) ++i;
        fraction = text.substr(start, i - start);
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
        return refuse("has an unknown unit '" + escape_control(shortened(unit)) + "': use ms, s, m or h");
    }
    if (whole > limit / unit_ms) return refuse("is too long: at most " + std::to_string(limit) + " ms");
    // The fraction times the unit, exactly, however many its digits: from the
    // last digit on, the carry ends as the whole milliseconds, and a digit
    // left over rounds up (a nonzero wait never becomes "do not wait"). Nine
    // digits and a round-up made "0.91111111111111111199h" 3280000 ms, one
    // short of what it says (found by tests/fuzz/fuzz_duration.cpp).
    std::uint64_t part = 0;
    bool left_over = false;
    for (std::size_t k = fraction.size(); k-- > 0;) {
        const std::uint64_t p = static_cast<std::uint64_t>(fraction[k] - '0') * unit_ms + part;
        left_over = left_over || p % 10 != 0;
        part = p / 10;
    }
    const std::uint64_t ms = whole * unit_ms + part + (left_over ? 1 : 0);
    if (ms > limit) return refuse("is too long: at most " + std::to_string(limit) + " ms");
    return {std::chrono::milliseconds(static_cast<std::int64_t>(ms)), {}};
}

parsed_duration parse_duration_in(std::string_view text, duration_range range) {
    auto r = parse_wait_duration(text);
    if (!r) return r;
    if (r.value >= range.min && r.value <= range.max) return r;
    const auto quoted = "'" + escape_control(shortened(text)) + "'";
    if (range.min == std::chrono::milliseconds(1) && r.value.count() == 0)
        return {std::chrono::milliseconds(0), quoted + " must be more than 0"};
    return {std::chrono::milliseconds(0),
            quoted + " is out of range: " + duration_text(range.min) + " to " + duration_text(range.max)};
}

std::string duration_text(std::chrono::milliseconds d) {
    const auto ms = d.count();
    if (ms == 0) return "0";
    if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
    if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

std::string wait_unit_hint(std::string_view option, std::string_view text) {
    if (text.empty() || text.size() > 3 || text.front() == '0') return {};
    for (char c : text)
        if (c < '0' || c > '9') return {};
    const std::string o(option), n(text);
    return o + " " + n + " waits " + n + " ms; for " + n + (n == "1" ? " second" : " seconds") + " write " + o + " " +
           n + "s";
}

std::string duration_unit_hint(std::string_view option, std::string_view text, duration_range range) {
    const auto plain = wait_unit_hint(option, text);  // a plain 1-999, or nothing
    if (plain.empty()) return {};
    const std::string o(option), n(text);
    if (std::chrono::seconds(std::stoi(n)) > range.max) return {};
    return o + " " + n + " is " + n + " ms; for " + n + (n == "1" ? " second" : " seconds") + " write " + o + " " +
           n + "s";
}

std::string unknown_option_text(std::string_view usage, std::string_view word, const std::vector<std::string>& options) {
    const auto name = word.substr(0, word.find('='));
    std::string closest;
    if (name.starts_with("--")) {
        std::vector<std::string> long_names;
        for (const auto& o : options)
            if (o.starts_with("--")) long_names.push_back(o.substr(2));
        closest = closest_name(name.substr(2), long_names);
        if (!closest.empty()) closest = "--" + closest;
    }
    return "unknown option '" + shortened(name) + "'" +
           (closest.empty() ? "" : "; did you mean '" + closest + "'?") + " (" + std::string(usage) +
           " --help lists the options)";
}

namespace {

// The optimal string alignment distance: Levenshtein's, plus a swap of two
// neighbouring characters as one edit.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    // One table in one allocation, row i at d[i * width].
    const std::size_t width = b.size() + 1;
    std::vector<std::size_t> d((a.size() + 1) * width);
    const auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * width + j]; };
    for (std::size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
    for (std::size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
        }
    return at(a.size(), b.size());
}

} // namespace

std::string closest_name(std::string_view word, const std::vector<std::string>& names) {
    constexpr std::size_t near_enough = 2;
    if (word.size() > 64) return {};  // nobody mistypes a command that long
    std::string best;
    std::size_t best_distance = near_enough + 1;
    for (const auto& name : names) {
        // The distance is at least the difference in length: a name that
        // much longer or shorter is never near enough.
        const auto longer = std::max(word.size(), name.size()), shorter = std::min(word.size(), name.size());
        if (longer - shorter > near_enough) continue;
        const auto distance = edit_distance(word, name);
        if (distance < best_distance) {
            best = name;
            best_distance = distance;
        }
    }
    return best_distance < word.size() ? best : std::string();
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

std::string missing_separator_hint(std::string_view usage, const std::vector<std::string>& paths,
                                   const std::vector<std::string>& command) {
    std::string hint = "CMD goes after --: " + std::string(usage);
    for (const auto& p : paths) hint += " " + shell_word(p);
    hint += " --";
    for (const auto& w : command) hint += " " + shell_word(w);
    return hint + " (without it, a word after LOCK_PATH could be CMD or one more lock path)";
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
