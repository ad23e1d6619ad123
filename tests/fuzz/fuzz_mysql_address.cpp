// Fuzz target: a MySQL address (mysql://[user[:password]@]host[:port][/db],
// mariadb://..., host[:port], or key=value pairs). Properties: an accepted
// address has a host or a socket and a port from 1; what logs name
// (endpoint()) does not depend on its password; a refusal never quotes a word of the
// password (a URL's text after the user's ':', a pair's value of password=,
// up to the next known key) unless the same text with that word replaced
// gives a refusal that shows it too.
#include "fuzz_check.hpp"

#include "backends/mysql/mysql_address.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace {

using namespace zklock;
using fuzz::check;

/// Where the password of `text` is, by the forms' rules and a blank's
/// meaning to a user (a password of several words), or npos.
std::pair<std::size_t, std::size_t> password_span(std::string_view text) {
    const auto key = text.find("password=");
    if (key != std::string_view::npos && text.find("://") == std::string_view::npos) {
        const auto start = key + 9;
        std::size_t end = text.size();
        for (const std::string_view next : {" host=", " port=", " user=", " database=", " dbname=", " socket=",
                                                " ssl_mode=", " ssl_ca=", " ssl_cert=", " ssl_key="})
            if (const auto at = text.find(next, start); at != std::string_view::npos) end = std::min(end, at);
        return {start, end};
    }
    const auto scheme = text.find("://");
    const auto start = scheme == std::string_view::npos ? 0 : scheme + 3;
    const auto slash = text.find('/', start);
    const auto authority = text.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    const auto at = authority.rfind('@');
    if (at == std::string_view::npos) return {std::string_view::npos, 0};
    const auto colon = authority.substr(0, at).find(':');
    if (colon == std::string_view::npos) return {std::string_view::npos, 0};
    return {start + colon + 1, start + at};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = fuzz::text_of(data, size);
    std::error_code ec;
    std::string reason;
    const auto a = detail::mysql::parse_mysql_address(text, ec, &reason);
    const auto [start, end] = password_span(text);

    if (!ec) {
        check(!a.host.empty() || !a.socket.empty(), "an address has a host or a socket");
        check(a.port >= 1, "a port from 1");
        auto without_password = a;
        without_password.password.clear();
        check(a.endpoint() == without_password.endpoint(), "the endpoint does not depend on the password");
        const auto resolved = detail::mysql::resolve_mysql_address(text, "u", "p", ec);
        check(!ec && resolved.password == (a.password.empty() ? "p" : a.password), "the options' password applies");
        return 0;
    }
    check(!reason.empty(), "a refusal has a reason");
    if (start == std::string_view::npos || end <= start) return 0;
    // Each word of the password against the same text with that word
    // replaced in the password by one of its length: what the refusal says
    // then too is the message's own words or another part of the text. Words of letters,
    // digits, '-' and '_' only, whose replacement keeps the text's shape.
    const auto password = text.substr(start, end - start);
    std::size_t compared = 0;
    for (const auto& word : fuzz::split(password, ' ')) {
        const auto plain = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; };
        if (word.size() < 4 || !std::all_of(word.begin(), word.end(), plain) || ++compared > 8) continue;
        // A refusal may quote a known key, so a word that is part of one
        // ("word" of 'password') proves nothing: the guessed password span may
        // hold a later pair's key, which the replacement then changes too.
        constexpr std::string_view keys[] = {"host", "port", "user", "password", "database", "dbname", "socket"};
        if (std::any_of(std::begin(keys), std::end(keys),
                        [&](std::string_view k) { return k.find(word) != std::string_view::npos; }))
            continue;
        const std::string other(word.size(), word.find('Q') == std::string::npos ? 'Q' : 'Z');
        // Only inside the password: the same letters elsewhere (in a key the
        // refusal quotes) stay.
        std::string inside(password);
        for (auto at = inside.find(word); at != std::string::npos; at = inside.find(word, at + other.size()))
            inside.replace(at, word.size(), other);
        const auto replaced = std::string(text.substr(0, start)) + inside + std::string(text.substr(end));
        std::string replaced_reason;
        std::error_code replaced_ec;
        (void)detail::mysql::parse_mysql_address(replaced, replaced_ec, &replaced_reason);
        if (!fuzz::contains(replaced_reason, word))
            check(!fuzz::contains(reason, word), "a refusal never quotes a word of the password", reason);
    }
    return 0;
}
