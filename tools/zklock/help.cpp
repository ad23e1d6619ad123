// zklock help [COMMAND]: the same text as `zklock --help` or `zklock COMMAND --help`.
#include "commands.hpp"

#include <iostream>

namespace zklock::cli {

void add_help(CLI::App& app, int& exit_code) {
    auto command = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("help", "Describe zklock, or one command: zklock help run");
    cmd->add_option("COMMAND", *command, "The command to describe");
    cmd->callback([&app, command, &exit_code] {
        if (command->empty()) {
            // app.help() would describe the selected subcommand: help itself.
            std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
            exit_code = 0;
            return;
        }
        for (const auto* sub : app.get_subcommands({}))
            if (sub->get_name() == *command && !sub->get_group().empty()) {
                std::cout << sub->help(app.get_name());
                exit_code = 0;
                return;
            }
        std::string known;
        for (const auto* sub : app.get_subcommands({}))
            if (!sub->get_group().empty()) known += (known.empty() ? "" : ", ") + sub->get_name();
        notice("help: no command '" + *command + "' (commands: " + known + ")");
        exit_code = exit_usage;
    });
}

} // namespace zklock::cli
