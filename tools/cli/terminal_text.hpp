// Text from outside (node data, participant ids, node names, user input) made
// safe to print on a terminal. Pure functions; unit-tested.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zklock::cli {

/// `text` with everything a terminal would act on shown as an escape instead:
/// C0 control characters and DEL as \xHH (\n, \r, \t as such), a backslash as
/// \\ (so the output reads back unambiguously), bytes that are not valid UTF-8
/// as \xHH, and the code points that reorder or break lines as \uHHHH (C1
/// controls U+0080-U+009F, bidirectional controls U+200E-U+200F,
/// U+202A-U+202E, U+2066-U+2069, line and paragraph separators U+2028-U+2029).
/// Valid UTF-8 otherwise passes unchanged.
std::string escape_control(std::string_view text);

/// How many columns of outside text (a path, a connect string, node data, an
/// id, a command name) a message quotes at most, so that a message stays about
/// one terminal line whatever it was given.
inline constexpr std::size_t quote_width = 48;

/// Which part of a text shortened() keeps: its start (a path, a command,
/// node data) or its end (a node name, whose sequence number ends it).
enum class keep { start, end };

/// `text`, or when escape_control() would show it in more than `width`
/// characters, its start and an ellipsis ("…"), or with keep::end an ellipsis
/// and its end: as many whole characters as escape_control() shows in width-1
/// columns (an escape such as \x1b counts its four). Not escaped itself:
/// notice() escapes what it prints, a text that goes elsewhere is passed
/// through escape_control(). The one place that decides how much of a long
/// text a message, a hint or the status table shows.
std::string shortened(std::string_view text, std::size_t width = quote_width, keep kept = keep::start);

/// The number of characters (code points) in valid UTF-8 `text`: the columns
/// escape_control()'s output takes (no wide characters counted twice).
std::size_t columns(std::string_view text);

/// A word as a POSIX shell would read it back: unchanged when it holds only
/// characters with no meaning to the shell, otherwise in single quotes with
/// its text escaped by escape_control() (a word with control characters or a
/// backslash is then for reading, not for pasting).
std::string shell_word(std::string_view word);

/// `n` and the noun, singular for 1: "1 permit", "3 permits" (`plural`, when
/// given, instead of the noun and an s).
std::string counted(long long n, std::string_view noun, std::string_view plural = {});

} // namespace zklock::cli
