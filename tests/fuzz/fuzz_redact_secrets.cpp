// Fuzz target: redact_secrets() and the rest of support/secrets.hpp, on text
// that may hold a connection string (a command line, an address, an error).
// The input is PREFIX NUL SECRET NUL SUFFIX. The secret is put into the text
// the three ways a password is written (password=VALUE, password='VALUE',
// scheme://user:VALUE@host) and must be gone from what redact_secrets()
// returns, unless the same text with another password shows it (the prefix
// or suffix may hold it); the prefix loses its quotes, backslashes and '=',
// which would open a value around the secret. Also: a libpq connection string
// split for a child keeps no copy of its password, and its pair leaves
// nothing behind; a password file line reads back as its password;
// percent_decode() undoes percent-encoding.
#include "fuzz_check.hpp"

#include "support/secrets.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace {

using namespace zklock;
using fuzz::check;

std::string without(std::string_view s, std::string_view chars) {
    std::string out;
    for (const char c : s)
        if (chars.find(c) == std::string_view::npos) out += c;
    return out;
}

std::string quoted(std::string_view s) {
    std::string out = "'";
    for (const char c : s) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

/// PREFIX BEFORE WRITTEN AFTER SUFFIX, where WRITTEN is `secret` as the form
/// writes it (`write`: quoted, or as it is), must not show the secret.
template <class Write>
void expect_redacted(std::string_view prefix, std::string_view before, const std::string& secret, Write write,
                     std::string_view after, std::string_view suffix, const char* what) {
    if (secret.size() < 4) return;
    const auto around = [&](const std::string& value) {
        return std::string(prefix) + std::string(before) + write(value) + std::string(after) + std::string(suffix);
    };
    const auto text = around(secret);
    const auto masked = around("x");
    const auto out = detail::redact_secrets(text);
    if (fuzz::contains(detail::redact_secrets(masked), secret) || fuzz::contains(masked, secret)) return;
    check(!fuzz::contains(out, secret), what, out);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;
    const auto text = fuzz::text_of(data, size);
    (void)detail::redact_secrets(text);

    const auto parts = fuzz::split(text, '\0');
    // A prefix that opens a quote, escapes the blank after it or ends in a
    // keyword's '=' would make the secret part of its own value (redacted with
    // it) or of no value at all.
    const std::string prefix = without(parts[0], "'\"\\=");
    const std::string secret = parts.size() > 1 ? parts[1] : std::string();
    const std::string suffix = parts.size() > 2 ? parts[2] : std::string();
    const auto blanks = std::string_view(" \t\n\v\f\r", 6);

    auto bare = without(secret, blanks);
    while (!bare.empty() && (bare.front() == '\'' || bare.front() == '"')) bare.erase(0, 1);
    const auto as_is = [](const std::string& value) { return value; };
    expect_redacted(prefix, " password=", bare, as_is, " ", suffix, "password=VALUE is redacted");
    expect_redacted(prefix, " PGPASSWORD = ", bare, as_is, " ", suffix, "PGPASSWORD = VALUE is redacted");
    expect_redacted(prefix, " password=", secret, quoted, " ", suffix, "password='VALUE' is redacted");
    if (without(secret, "'\\") == secret)
        expect_redacted(prefix, " password='", secret, as_is, "' ", suffix, "the inside of password='VALUE' is redacted");
    auto userinfo_password = without(bare, "@");
    for (auto at = userinfo_password.find("://"); at != std::string::npos; at = userinfo_password.find("://"))
        userinfo_password.erase(at, 3);
    // Nor "//" first: "user:" before it would make "user://", a URL of its own.
    while (userinfo_password.starts_with('/')) userinfo_password.erase(0, 1);
    expect_redacted(prefix, " postgresql://user:", userinfo_password, as_is, "@host/db ", suffix,
                    "a URL's password is redacted");

    if (const auto split = detail::split_conninfo_password(text)) {
        // Fewer copies of the password than the text had (it may also be, say,
        // the user's name), none when it was there once or was quoted.
        const auto copies = [](std::string_view in, std::string_view part) {
            std::size_t n = 0;
            if (part.empty()) return n;
            for (auto at = in.find(part); at != std::string_view::npos; at = in.find(part, at + part.size())) ++n;
            return n;
        };
        // A password written with escapes (%XX in a URL, a backslash in a
        // value) is not in the text where it was written: its plain form
        // may be there only elsewhere (in the host, another key), and the
        // split keeps that.
        // The pairs kept are joined with one space where the text may have had
        // none ('a'b=c), so a password with a blank is counted by the next check.
        const auto left = copies(split->conninfo, split->password);
        const auto in_text = copies(text, split->password);
        const bool encoded = text.find_first_of("%\\") != std::string_view::npos;
        if (split->password.find_first_of(blanks) == std::string::npos)
            check(left == 0 || left < in_text || (encoded && left <= in_text),
                  "a connection string split for a child keeps no password", split->conninfo);
    }
    // The password's pair leaves nothing behind, whatever the password: the
    // split of "host=h password='SECRET' SUFFIX" is that of "host=h SUFFIX".
    const auto with_pair = detail::split_conninfo_password("host=h password=" + quoted(secret) + " " + suffix);
    const auto without_pair = detail::split_conninfo_password("host=h " + suffix);
    check(with_pair.has_value() == without_pair.has_value(), "a password's pair splits as the text without it");
    if (with_pair && without_pair) {
        check(with_pair->conninfo == without_pair->conninfo, "a password's pair leaves nothing in the split",
              with_pair->conninfo);
        if (suffix.find("password") == std::string::npos)  // a later password=... would win
            check(with_pair->password == secret, "the split reads the password back", with_pair->password);
    }
    if (const auto line = detail::pgpass_line(secret)) {
        check(line->starts_with("*:*:*:*:") && line->ends_with("\n"), "a password file line's form", *line);
        std::string back;
        for (std::size_t i = 8; i + 1 < line->size(); ++i) {
            if ((*line)[i] == '\\' && i + 2 < line->size()) ++i;
            back += (*line)[i];
        }
        check(back == secret, "a password file line reads back as its password", *line);
    } else {
        check(secret.find_first_of("\r\n") != std::string::npos, "only a line break keeps a password out of a file");
    }
    std::string encoded;
    for (const char c : secret) {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02x", static_cast<unsigned char>(c));
        encoded += hex;
    }
    const auto decoded = detail::percent_decode(encoded);
    check(decoded && *decoded == secret, "percent_decode() undoes percent-encoding");
    (void)detail::percent_decode(text);
    return 0;
}
