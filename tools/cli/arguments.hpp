// Reading the command line beyond what CLI11 checks: durations, the words
// after the lock path of run and elect, and the command a mistyped name meant.
// Pure functions; unit-tested.
#pragma once

#include <charconv>
#include <chrono>
#include <optional>
#include <system_error>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::cli {

/// `text` as a whole number of type T, 0 or more, in base 10 (no sign, no
/// leading blank, nothing after it, within T's range); nothing otherwise.
template <class T> std::optional<T> whole_number(std::string_view text) {
    T v{};
    const auto end = text.data() + text.size();
    const auto [at, err] = std::from_chars(text.data(), end, v, 10);
    if (text.empty() || err != std::errc() || at != end || v < 0) return std::nullopt;
    return v;
}

/// A parsed duration, or why the text is not one.
struct parsed_duration {
    std::chrono::milliseconds value{0};
    std::string error;  ///< empty when the text was a duration
    explicit operator bool() const noexcept { return error.empty(); }
};

/// The longest wait parse_wait_duration() accepts: INT_MAX ms (about 24.8 days).
inline constexpr std::chrono::milliseconds max_wait{2147483647};

/// Parses the value of `run -w`: a plain integer is milliseconds ("300"; what
/// -w always meant), a number with a unit may have a fraction ("1.5s", "500ms",
/// "2m", "0.5h"). A fraction of a millisecond rounds up, so only a zero is zero.
/// Refused: no digits, a sign, a fraction without a unit, an unknown unit,
/// more than max_wait. The error quotes the text escaped (escape_control())
/// and shortened(): it goes to the terminal as it is (CLI11 prints it).
parsed_duration parse_wait_duration(std::string_view text);

/// The values a duration option takes, both ends included.
struct duration_range {
    std::chrono::milliseconds min{0};
    std::chrono::milliseconds max = max_wait;
};

/// parse_wait_duration(), then within `range`: "'50ms' is out of range: 200ms
/// to 4s" ("'0' must be more than 0" when `range` starts at 1 ms). The rule
/// of every duration option: a plain integer is milliseconds.
parsed_duration parse_duration_in(std::string_view text, duration_range range);

/// A duration in the largest unit that divides it, as the options read it
/// back: "4s", "500ms", "2m", "1h", "1500ms", "0".
std::string duration_text(std::chrono::milliseconds d);

/// The note `-w TEXT` gets when a flock(1) user would read it as seconds
/// (flock -w 5 waits 5 s, zklock run -w 5 waits 5 ms): a plain integer from 1
/// to 999, which is a wait shorter than a second here. "-w 5 waits 5 ms; for 5
/// seconds write -w 5s". Empty otherwise (0, a unit, 1000 and more).
std::string wait_unit_hint(std::string_view option, std::string_view text);

/// The note every other duration option (`option`: "--connect-timeout") gets
/// by the same rule as -w's, for a plain integer from 1 to 999 whose reading
/// in seconds `range` would take: "--connect-timeout 5 is 5 ms; for 5 seconds
/// write --connect-timeout 5s". Empty otherwise (0, a unit, 1000 and more,
/// or N seconds past `range`: --tick 200, at most 1m, is surely 200 ms).
std::string duration_unit_hint(std::string_view option, std::string_view text, duration_range range);

/// What an option no command takes gets: "unknown option '--jsn'; did you
/// mean '--json'? (zklock status --help lists the options)". `word` as
/// written ("--conect=h:1" is compared as "--conect"), `usage` the command
/// ("zklock status"), `options` its option names ("--json", "-c", ...). A
/// long option is compared with the long names by closest_name(), without
/// their dashes; a short one gets no guess (one letter from any other).
std::string unknown_option_text(std::string_view usage, std::string_view word, const std::vector<std::string>& options);

/// The one of `names` nearest to `word` by edit distance (insertions,
/// deletions, substitutions and swaps of neighbours each count 1: "rnu" is 1
/// from "run"), when it is near enough to be what was meant: at most 2 edits,
/// and fewer than the word has characters. Ties go to the earlier name. Empty
/// when none is.
std::string closest_name(std::string_view word, const std::vector<std::string>& names);

/// The words CLI11 leaves after the lock path (and the election's id) of run or
/// elect, with positionals_at_end: the "--" is among them when it came after
/// the path ("/x -- true" leaves "--", "true"; "/x -n -- true" leaves "-n", "--", "true").
struct trailing_words {
    std::vector<std::string> command;    ///< CMD and its arguments
    std::vector<std::string> misplaced;  ///< options written after the lock path; empty when none
    bool separated = false;              ///< misplaced options were followed by "--" (command is what came after it)
};

/// Splits the words after the lock path: a leading "--" is dropped and
/// everything after it is the command, even words that look like options
/// ("/x -- -weird" runs "-weird"); a first word that looks like an option
/// ("-n", "--once"; not "-" alone) was meant as an option, written after the
/// lock path by mistake. Options of zklock never follow the lock path: CLI11
/// takes every word after the first positional as a positional.
trailing_words split_trailing(std::vector<std::string> words);

/// `zklock run PATH [PATH...] -- CMD`: the words after the first lock path up
/// to a "--" are more lock paths when there is a "--" and every word before it
/// starts with '/'. `rest` is what follows them (the "--" included), for
/// split_trailing; without such paths it is every word ("/x -- true" leaves
/// "--", "true"; "/x true" leaves "true", which run refuses for want of its
/// "--": missing_separator_hint()).
struct lock_path_words {
    std::vector<std::string> more_paths;
    std::vector<std::string> rest;
};
lock_path_words split_lock_paths(std::vector<std::string> words);

/// What `zklock run` says of a command written without its "--", as zklock
/// elect refuses one: "CMD goes after --: zklock run /x -- echo hi (without
/// it, a word after LOCK_PATH could be CMD or one more lock path)". `usage`
/// is "zklock run", `paths` the lock paths, `command` the words after them.
std::string missing_separator_hint(std::string_view usage, const std::vector<std::string>& paths,
                                   const std::vector<std::string>& command);

/// The hint for misplaced options: "options go before LOCK_PATH: zklock run -n /x -- true"
/// (without a "--" after them: the generic form, naming the first misplaced word).
/// `usage` is "zklock run", `positionals` what came before the misplaced
/// options ({"/x"}, or {"/x", "ID"} for elect), `path_name` "LOCK_PATH" or "ELECTION_PATH".
std::string misplaced_option_hint(std::string_view usage, std::string_view path_name,
                                  const std::vector<std::string>& positionals, const trailing_words& words);

} // namespace zklock::cli
