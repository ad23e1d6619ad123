// A program's own command line, taken out of sight: every local user can read
// /proc/PID/cmdline, so a secret typed there (`--postgres '... password=...'`,
// `--redis redis://u:pw@h`) is redacted in it at once.
#pragma once

#include <string>
#include <vector>

namespace zklock::cli {

/// A copy of argv (for parsing), after overwriting each argument of the
/// process's own (argv[1] on) with its redacted text (redact_secrets(); a
/// redacted text longer than the original is cut, and a cut "***" still hides it).
std::vector<std::string> take_arguments(int argc, char** argv);

} // namespace zklock::cli
