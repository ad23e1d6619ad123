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

/// Parses `arguments` (take_arguments()'s) with `app`, whose commands store
/// their exit status in `exit_code`, and returns the program's exit status:
/// CLI11's for --help and --version, exit_usage for bad arguments, and for a
/// zklock::error or another exception escaping a command, its message on
/// stderr and exit_status_for() its code (1 for another exception).
int parse_and_run(CLI::App& app, const std::vector<std::string>& arguments, const int& exit_code);

} // namespace zklock::cli
