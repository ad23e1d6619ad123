// Fuzz target: a Redis address (host:port, redis://[user:password@]host[:port][/db]).
// Properties: an accepted address has a host, a port in 1..65535 and a db from
// 0; written back as a URL with its user and password percent-encoded it
// parses to itself; the setup commands authenticate with its credentials and
// select its db; a refusal never quotes the userinfo's password (the text
// after the first ':' before the last '@'), in its raw or decoded form,
// unless the refusal of a password of the same shape says the same words.
#include "fuzz_check.hpp"

#include "backends/redis/redis_address.hpp"
#include "support/secrets.hpp"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

using namespace zklock;
using fuzz::check;

std::string encoded(std::string_view s) {
    std::string out;
    for (const char c : s) {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
        out += hex;
    }
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = fuzz::text_of(data, size);
    std::error_code ec;
    std::string reason;
    const auto a = detail::parse_redis_address(text, ec, &reason);

    if (ec) {
        check(!reason.empty(), "a refusal has a reason");
        const auto at = text.rfind('@');
        const auto scheme = text.find("://");
        if (at == std::string_view::npos) return 0;
        const auto start = scheme != std::string_view::npos && scheme < at ? scheme + 3 : 0;
        const auto userinfo = text.substr(start, at - start);
        const auto colon = userinfo.find(':');
        if (colon == std::string_view::npos) return 0;
        const auto raw = userinfo.substr(colon + 1);
        // What the reason says of the same text with another password of the
        // same shape: its letters and digits replaced, the rest (blanks,
        // escapes, delimiters) kept, so that the same refusal comes with the
        // same words of its own.
        std::string other(raw);
        for (std::size_t k = 0; k < other.size(); ++k) {
            if (other[k] == '%') k += 2;  // an escape stays one
            else if (std::isalnum(static_cast<unsigned char>(other[k]))) other[k] = other[k] == 'Q' ? 'Z' : 'Q';
        }
        if (other == raw) return 0;  // nothing to tell the password from the rest by
        std::string masked(text.substr(0, start + colon + 1));
        masked += other;
        masked += text.substr(at);
        std::string masked_reason;
        std::error_code masked_ec;
        (void)detail::parse_redis_address(masked, masked_ec, &masked_reason);
        const std::string public_text = masked_reason + std::string(text.substr(0, start + colon + 1)) +
                                        std::string(text.substr(at));
        std::vector<std::string> secrets{std::string(raw)};
        if (const auto decoded = detail::percent_decode(raw)) secrets.push_back(*decoded);
        for (const auto& secret : secrets)
            if (secret.size() >= 4 && !fuzz::contains(public_text, secret))
                check(!fuzz::contains(reason, secret), "a refusal never quotes the password", reason);
        return 0;
    }

    check(!a.host.empty(), "an address has a host");
    check(a.port >= 1 && a.port <= 65535, "a port in 1..65535");
    check(a.db >= 0, "a db from 0");
    check(a.user.empty() || !a.password.empty(), "a user comes with a password");

    const bool v6 = a.host.find(':') != std::string::npos;
    std::string url = "redis://";
    if (a.has_credentials()) url += encoded(a.user) + ":" + encoded(a.password) + "@";
    url += (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port) + "/" + std::to_string(a.db);
    std::error_code again_ec;
    std::string again_reason;
    const auto again = detail::parse_redis_address(url, again_ec, &again_reason);
    // A host the URL form cannot carry ('/', '?', '#', '@' or ']' in it) is
    // refused there, or read as other parts: only a host without them must
    // come back.
    if (a.host.find_first_of("/?#@[]") == std::string::npos)
        check(!again_ec && again == a, "an address written as a URL parses to itself", again_reason);

    const auto commands = detail::redis_setup_commands(a);
    std::size_t next = 0;
    if (a.has_credentials()) {
        check(!commands.empty() && commands[0].front() == "AUTH" && commands[0].back() == a.password,
              "the first command authenticates");
        check(commands[0].size() == (a.user.empty() ? 2u : 3u), "AUTH names the user when there is one");
        next = 1;
    }
    if (a.db != 0)
        check(commands.size() == next + 1 && commands[next] ==
                  std::vector<std::string>{"SELECT", std::to_string(a.db)}, "SELECT the db");
    else
        check(commands.size() == next, "no SELECT of db 0");

    const auto resolved = detail::resolve_redis_address(text, "u", "p", 7, ec);
    check(!ec, "an address parsed resolves");
    check(a.has_credentials() ? resolved.password == a.password : resolved.password == "p",
          "the options' credentials apply when the text has none");
    (void)detail::redis_error_code(text);
    return 0;
}
