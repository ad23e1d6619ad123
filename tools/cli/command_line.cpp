#include "command_line.hpp"

#include "arguments.hpp"
#include "common.hpp"
#include "terminal_text.hpp"

#include <zklock/error.hpp>
#include <zklock/secrets.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <iostream>

namespace zklock::cli {

std::vector<std::string> take_arguments(int argc, char** argv) {
    std::vector<std::string> copy(argv, argv + argc);
    for (int i = 1; i < argc; ++i) {
        const auto redacted = zklock::redact_secrets(argv[i]);
        if (redacted == argv[i]) continue;
        const std::size_t n = std::strlen(argv[i]);
        std::memset(argv[i], 0, n);
        std::memcpy(argv[i], redacted.data(), std::min(n, redacted.size()));  // a cut "***" still hides it
    }
    return copy;
}

std::vector<std::string> command_names(CLI::App& app) {
    std::vector<std::string> names;
    for (auto* sub : app.get_subcommands({}))
        if (!sub->get_group().empty()) names.push_back(sub->get_name());
    return names;
}

std::string unknown_command_text(const std::string& program, const std::string& word,
                                 const std::vector<std::string>& commands) {
    const auto closest = closest_name(word, commands);
    return "no command '" + shortened(word) + "'" + (closest.empty() ? "" : "; did you mean '" + closest + "'?") +
           " (" + program + " help lists the commands)";
}

std::vector<std::string> option_names(const CLI::App& cmd) {
    std::vector<std::string> names;
    for (const auto* o : cmd.get_options()) {
        if (o->get_group().empty() || !o->nonpositional()) continue;  // hidden, or a positional
        for (const auto& name : o->get_lnames()) names.push_back("--" + name);
        for (const auto& name : o->get_snames()) names.push_back("-" + name);
    }
    return names;
}

namespace {

// After CLI11's ExtrasError: the first word that looks like an option and
// that the deepest command holding one did not take, told of as
// unknown_option_text() tells; empty when the extras are no options.
std::string unknown_option_notice(const CLI::App& app) {
    std::string usage = app.get_name();
    std::string text;
    for (const CLI::App* at = &app; at != nullptr;) {
        for (const auto& word : at->remaining(false))
            if (word.size() > 1 && word.front() == '-' && word != "--") {
                text = unknown_option_text(usage, word, option_names(*at));
                break;
            }
        const auto parsed = at->get_subcommands();
        at = parsed.empty() ? nullptr : parsed.front();
        if (at) usage += " " + at->get_name();
    }
    return text;
}

} // namespace

int parse_and_run(CLI::App& app, const std::vector<std::string>& arguments, const int& exit_code) {
    // A first word that is no option and no command: say so, and what was
    // meant (CLI11 would ask for "a subcommand" without naming the word).
    const auto is_command = [&app](const std::string& word) {
        for (auto* sub : app.get_subcommands({}))
            if (sub->check_name(word)) return true;
        return false;
    };
    if (arguments.size() > 1 && !arguments[1].starts_with('-') && !is_command(arguments[1])) {
        const auto text = unknown_command_text(app.get_name(), arguments[1], command_names(app));
        std::cerr << app.get_name() << ": " << escape_control(text) << std::endl;
        return exit_usage;
    }
    std::vector<const char*> args;
    for (const auto& a : arguments) args.push_back(a.c_str());
    try {
        app.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::ExtrasError& e) {
        // CLI11 names no option that was meant: say the nearest, as for a command.
        if (const auto text = unknown_option_notice(app); !text.empty()) {
            std::cerr << app.get_name() << ": " << escape_control(text) << std::endl;
            return exit_usage;
        }
        app.exit(e);
        return exit_usage;
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : exit_usage;
    } catch (const zklock::error& e) {
        notice(e.what());
        return exit_status_for(e.code());
    } catch (const std::exception& e) {
        notice(e.what());
        return 1;
    }
    return exit_code;
}

} // namespace zklock::cli
