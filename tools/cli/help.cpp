// help [COMMAND [SUBCOMMAND]]: the same text as `zklock --help`,
// `zklock COMMAND --help` or `zklock COMMAND SUBCOMMAND --help`.
#include "help.hpp"

#include "arguments.hpp"
#include "command_line.hpp"
#include "common.hpp"
#include "terminal_text.hpp"

#include <iostream>
#include <memory>

namespace zklock::cli {

std::string overview(CLI::App& app) {
    // app.help() would describe the selected subcommand (help itself, when it runs).
    return app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
}

void add_help(CLI::App& app, int& exit_code, help_options options) {
    auto words = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand("help", options.description);
    cmd->add_option("COMMAND", *words, "The command to describe, and its subcommand if it has any");
    cmd->callback([&app, words, &exit_code, options = std::move(options)] {
        if (words->empty()) {
            std::cout << overview(app);
            exit_code = 0;
            return;
        }
        // Down the tree of commands, one word a level; hidden ones (no group) are not described.
        CLI::App* at = &app;
        std::string prefix = app.get_name();  // the words above `at`, for its usage line
        for (const auto& word : *words) {
            CLI::App* found = nullptr;
            const auto names = command_names(*at);
            std::string known;
            for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
            for (auto* sub : at->get_subcommands({}))
                if (!sub->get_group().empty() && sub->get_name() == word) found = sub;
            if (!found) {
                const auto closest = closest_name(word, names);
                notice(at == &app ? "help: " + unknown_command_text(app.get_name(), word, names)
                                  : "help: " + prefix + " " + at->get_name() + " has no subcommand '" +
                                        shortened(word) + "'" +
                                        (closest.empty() ? "" : "; did you mean '" + closest + "'?") + " (" +
                                        (known.empty() ? std::string("it has none") : "subcommands: " + known) + ")");
                exit_code = exit_usage;
                return;
            }
            if (at == &app && options.described_elsewhere && options.described_elsewhere(word)) {
                exit_code = options.describe_elsewhere(*words);
                return;
            }
            if (at != &app) prefix += " " + at->get_name();
            at = found;
        }
        std::cout << at->help(prefix);
        exit_code = 0;
    });
}

} // namespace zklock::cli
