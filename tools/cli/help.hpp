// `help [COMMAND [SUBCOMMAND]]`, the same for zklock and zklock-bench: the text
// `PROGRAM --help` or `PROGRAM COMMAND [SUBCOMMAND] --help` prints.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace zklock::cli {

struct help_options {
    /// The help command's line in the list of commands.
    std::string description;
    /// True for a command another program describes (zklock's bench and chaos,
    /// which zklock-bench runs); none: every command is described here.
    std::function<bool(const std::string& command)> described_elsewhere;
    /// Describes such a command, given the words after `help` (the command
    /// first), and returns the exit status.
    std::function<int(const std::vector<std::string>& words)> describe_elsewhere;
};

/// Registers `help [COMMAND [SUBCOMMAND]]` on `app`; registered last, so that it
/// knows every command.
void add_help(CLI::App& app, int& exit_code, help_options options);

/// What `help` without a command (and a bare zklock) prints: the usage and the commands.
std::string overview(CLI::App& app);

} // namespace zklock::cli
