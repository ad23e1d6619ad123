// Fuzz target: an auth file (--auth-file, $ZKLOCK_AUTH_FILE), read as zklock's
// commands read it: its text as zklock::read_auth_file() parses it, then the
// CLI's split of its redis: and mysql: lines and what it prints
// (cli::load_credentials()), without a file. Properties: every line but
// blanks and comments is one entry, as parse_auth() reads it; neither the
// reason of a refusal, nor what the CLI prints, nor an identity quotes a
// password (the text after the user of a digest, redis or mysql line, every
// credential of another scheme) unless the same text is there with the
// passwords replaced.
#include "fuzz_check.hpp"

#include "common.hpp"
#include "session/auth_file_text.hpp"

#include <zklock/acl.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace {

using namespace zklock;
using fuzz::check;

std::string trimmed(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return {};
    return std::string(s.substr(b, s.find_last_not_of(" \t\r") - b + 1));
}

/// The name the file goes by in messages (a path a message may quote).
const std::string file_name = "/run/zklock-fuzz/auth";

struct outcome {
    std::vector<auth_entry> entries;
    std::string reason;
    bool refused = false;
    std::string printed;  ///< what load_credentials() writes to stderr
    std::string identity;
};

/// Reads `content` as an auth file, both ways: as read_auth_file() reads a
/// private file of that content (detail::parse_auth_file_text(), what it
/// calls once the file is open), and as the CLI's load_credentials() then
/// takes its entries and prints what it refuses (credentials_of(),
/// notice_text()). No file: the opening and the mode check are the same for
/// every content, and the unit tests have them.
outcome read_both_ways(std::string_view content) {
    outcome out;
    std::error_code ec;
    out.entries = detail::parse_auth_file_text(content, file_name, ec, &out.reason);
    out.refused = static_cast<bool>(ec);
    out.identity = identity(out.entries);
    if (out.refused) {
        out.printed = cli::notice_text(out.reason);
        return out;
    }
    const auto credentials = cli::credentials_of(out.entries, file_name, {});
    if (!credentials.value) {
        out.printed = cli::notice_text(credentials.problem);
        return out;
    }
    check(credentials.value->zookeeper.size() <= out.entries.size(), "the CLI keeps the ZooKeeper entries");
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;
    const auto content = fuzz::text_of(data, size);

    // The file's lines as the reader sees them, each split into what may be
    // shown (scheme, user) and its secret.
    struct line_parts {
        std::string kept;    // the whole line when it holds no secret
        std::string secret;
    };
    std::vector<line_parts> lines;
    std::string shown;  // every part that is no secret
    std::vector<std::string> entries;
    for (const auto& raw : fuzz::split(content, '\n')) {
        const auto line = trimmed(raw);
        if (line.empty() || line.front() == '#') {
            lines.push_back({raw, {}});
            continue;
        }
        entries.push_back(line);
        const auto colon = line.find(':');
        const auto scheme = line.substr(0, colon);
        const bool user_and_password = scheme == "digest" || scheme == "redis" || scheme == "mysql";
        line_parts parts{line, {}};
        if (colon != std::string::npos) {
            const auto credentials = line.substr(colon + 1);
            const auto user_end = credentials.find(':');
            if (user_and_password && user_end != std::string::npos) {
                parts = {scheme + ":" + credentials.substr(0, user_end + 1), credentials.substr(user_end + 1)};
            } else if (!user_and_password) {
                parts = {scheme + ":", credentials};
            }
        }
        shown += parts.kept + "\n";
        lines.push_back(std::move(parts));
    }

    // Each secret against the same file with that secret alone replaced: what
    // shows it there too (the message's own words, another line's scheme) is
    // no leak.
    const auto real = read_both_ways(content);
    std::size_t compared = 0;
    for (std::size_t i = 0; i < lines.size() && compared < 8; ++i) {
        const auto& secret = lines[i].secret;
        if (secret.size() < 4 || fuzz::contains(shown, secret)) continue;
        ++compared;
        std::string masked;
        for (std::size_t k = 0; k < lines.size(); ++k)
            masked += lines[k].kept + (k == i ? std::string("x") : lines[k].secret) + "\n";
        const auto without = read_both_ways(masked);
        if (!fuzz::contains(without.reason + file_name, secret))
            check(!fuzz::contains(real.reason, secret), "a refusal never quotes a password", real.reason);
        if (!fuzz::contains(without.printed + file_name, secret))
            check(!fuzz::contains(real.printed, secret), "the CLI never prints a password", real.printed);
        if (!fuzz::contains(without.identity, secret))
            check(!fuzz::contains(real.identity, secret), "an identity never holds a password", real.identity);
    }
    check(!fuzz::has_control(real.printed.substr(0, real.printed.empty() ? 0 : real.printed.size() - 1)),
          "the CLI's notice has control characters escaped", real.printed);
    if (real.refused) {
        check(real.entries.empty() && !real.reason.empty(), "a refused file gives no entry and a reason");
        return 0;
    }
    check(real.entries.size() == entries.size(), "one entry per line but blanks and comments");
    for (std::size_t i = 0; i < entries.size(); ++i) {
        std::error_code ec;
        const auto e = parse_auth(entries[i], ec);
        check(!ec && e == real.entries[i], "an entry is its line as parse_auth() reads it", entries[i]);
    }
    check(!validate_auth(real.entries), "the entries of a file read are valid");
    return 0;
}
