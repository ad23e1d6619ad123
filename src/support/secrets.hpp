// Secrets in connection strings and command lines: hidden before anything is
// printed or recorded, and taken out of what a child process gets on its argv.
// Pure functions, no I/O.
#pragma once


#include <optional>
#include <string>
#include <string_view>

namespace zklock::detail {

/// `s` with every %XX replaced by its byte (URL userinfo, URI parameters);
/// nullopt for a '%' without two hex digits.
std::optional<std::string> percent_decode(std::string_view s);

/// What replaces a secret.
inline constexpr std::string_view redacted = "***";

/// `text` with every secret replaced by "***":
///   - the value of any `...password=VALUE` (libpq's `password=` and
///     `sslpassword=`, a URL's `?password=`, `PGPASSWORD=`), case-insensitive,
///     with blanks around '=' allowed; VALUE single- or double-quoted (backslash
///     escapes inside, the quotes kept: password='***') or unquoted (up to the
///     next blank);
///   - the password of a URL's userinfo, `scheme://user:PASSWORD@host`
///     (postgresql://, redis://, ...): up to the last '@' before the next blank
///     or the next "://" (a user without password is kept).
/// Everything else is unchanged. Meant for text that may hold a connection
/// string: a command line (redact each argument before quoting it), a server
/// address, an error message.
std::string redact_secrets(std::string_view text);

/// A libpq connection string split for a child process: the string without its
/// password (for the child's argv), and the password (for its environment or a
/// password file).
struct conninfo_split {
    std::string conninfo;  ///< without `password=...` / the URI's password
    std::string password;  ///< empty when there was none
};

/// Splits a libpq connection string, keyword/value ("host=h password='a b'") or
/// URI ("postgresql://user:pw@h:5432/db?password=pw"), as libpq reads it:
/// keyword values quoted with '...' (backslash escapes) or unquoted (backslash
/// escapes), URI passwords percent-decoded. The other keywords keep their text.
/// nullopt when the string cannot be read that way (a keyword without '=', an
/// unterminated quote, a bad percent escape) or holds another secret this split
/// cannot move out of the argv (`sslpassword`): the caller must then not put it
/// on any argv.
std::optional<conninfo_split> split_conninfo_password(std::string_view conninfo);

/// A line of a PostgreSQL password file (PGPASSFILE) that gives `password` for
/// every host, port, database and user: "*:*:*:*:" + password with '\' and ':'
/// escaped by a backslash, and a newline. nullopt for a password with a line
/// break (a password file cannot hold one).
std::optional<std::string> pgpass_line(std::string_view password);

} // namespace zklock::detail
