#include "command_line.hpp"

#include "support/secrets.hpp"

#include <algorithm>
#include <cstring>

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

} // namespace zklock::cli
