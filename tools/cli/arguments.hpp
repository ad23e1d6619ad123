// Reading the command line of run and elect beyond what CLI11 checks: wait
// durations, and the words after the lock path. Pure functions; unit-tested.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::cli {

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
/// more than max_wait.
parsed_duration parse_wait_duration(std::string_view text);

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
/// split_trailing; without such paths it is every word, so that one path
/// keeps its optional "--" ("/x true" runs true).
struct lock_path_words {
    std::vector<std::string> more_paths;
    std::vector<std::string> rest;
};
lock_path_words split_lock_paths(std::vector<std::string> words);

/// The hint for misplaced options: "options go before LOCK_PATH: zklock run -n /x -- true"
/// (without a "--" after them: the generic form, naming the first misplaced word).
/// `usage` is "zklock run", `positionals` what came before the misplaced
/// options ({"/x"}, or {"/x", "ID"} for elect), `path_name` "LOCK_PATH" or "ELECTION_PATH".
std::string misplaced_option_hint(std::string_view usage, std::string_view path_name,
                                  const std::vector<std::string>& positionals, const trailing_words& words);

} // namespace zklock::cli
