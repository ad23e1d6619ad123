// A program's own command line, taken out of sight: every local user can read
// /proc/PID/cmdline, so a secret typed there (`--postgres '... password=...'`,
// `--redis redis://u:pw@h`) is redacted in it at once.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace zklock::cli {

/// A copy of argv (for parsing), after overwriting each argument of the
/// process's own (argv[1] on) with its redacted text (redact_secrets(); a
/// redacted text longer than the original is cut, and a cut "***" still hides it).
std::vector<std::string> take_arguments(int argc, char** argv);

/// The commands `app` lists (those in a group: not the hidden ones).
std::vector<std::string> command_names(CLI::App& app);

/// The names of the options `cmd` lists in its help ("--json", "-c",
/// "--connect"): not the hidden ones (no group), not the positionals.
std::vector<std::string> option_names(const CLI::App& cmd);

/// What a word that is no command of `program` gets: "no command 'rnu'; did
/// you mean 'run'? (zklock help lists the commands)", the word shortened(),
/// the suggestion closest_name()'s (none: no "did you mean").
std::string unknown_command_text(const std::string& program, const std::string& word,
                                 const std::vector<std::string>& commands);

/// Parses `arguments` (take_arguments()'s) with `app`, whose commands store
/// their exit status in `exit_code`, and returns the program's exit status:
/// CLI11's for --help and --version, exit_usage for bad arguments (a first
/// word that is no command: unknown_command_text(); an option the command
/// does not take: unknown_option_text(), with the command's option_names()),
/// and for a zklock::error or another exception escaping a command, its
/// message on stderr and exit_status_for() its code (1 for another exception).
int parse_and_run(CLI::App& app, const std::vector<std::string>& arguments, const int& exit_code);

} // namespace zklock::cli
