#include "command_line.hpp"

#include "common.hpp"
#include "support/secrets.hpp"

#include <zklock/error.hpp>

#include <algorithm>
#include <cstring>
#include <exception>

namespace zklock::cli {

std::vector<std::string> take_arguments(int argc, char** argv) {
    std::vector<std::string> copy(argv, argv + argc);
    for (int i = 1; i < argc; ++i) {
        const auto redacted = zklock::detail::redact_secrets(argv[i]);
        if (redacted == argv[i]) continue;
        const std::size_t n = std::strlen(argv[i]);
        std::memset(argv[i], 0, n);
        std::memcpy(argv[i], redacted.data(), std::min(n, redacted.size()));  // a cut "***" still hides it
    }
    return copy;
}

int parse_and_run(CLI::App& app, const std::vector<std::string>& arguments, const int& exit_code) {
    std::vector<const char*> args;
    for (const auto& a : arguments) args.push_back(a.c_str());
    try {
        app.parse(static_cast<int>(args.size()), args.data());
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
