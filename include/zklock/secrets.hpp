// Secrets in connection strings and command lines: hidden before anything is
// printed or recorded, and kept off a child process's argv (which every user
// of the machine can read in /proc). Pure functions, no I/O. (Auth files for
// ZooKeeper: read_auth_file() in acl.hpp; an auth entry is named without its
// secret by identity().)
#pragma once

#include <zklock/export.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace zklock {

/// `text` with every secret replaced by "***":
///   - the value of any `...password=VALUE` (libpq's `password=` and
///     `sslpassword=`, a URL's `?password=`, `PGPASSWORD=`), case-insensitive,
///     with blanks around '=' allowed; VALUE single- or double-quoted (the
///     quotes kept: password='***') or unquoted (up to the next blank);
///   - the password of a URL's userinfo, `scheme://user:PASSWORD@host`
///     (postgresql://, redis://, ...); a user without password is kept.
/// Everything else is unchanged. For text that may hold a connection string:
/// a command line (redact each argument before quoting it), a server address,
/// an error message. Thread-safe.
ZKLOCK_EXPORT std::string redact_secrets(std::string_view text);

/// A libpq connection string split for a child process: the string without
/// its password (for the child's argv) and the password (for a password file).
struct conninfo_split {
    std::string conninfo;  ///< without `password=...` / the URI's password
    std::string password;  ///< empty when there was none
};

/// Splits a libpq connection string, keyword/value ("host=h password='a b'")
/// or URI ("postgresql://user:pw@h:5432/db?password=pw"), as libpq reads it
/// (URI passwords percent-decoded; the other keywords keep their text).
/// nullopt when it cannot be read that way (a keyword without '=', an
/// unterminated quote, a bad percent escape) or holds a secret this split
/// cannot move off the argv (`sslpassword`): then put it on no argv.
/// Thread-safe.
ZKLOCK_EXPORT std::optional<conninfo_split> split_conninfo_password(std::string_view conninfo);

/// The line of a PostgreSQL password file (PGPASSFILE, mode 0600) that gives
/// `password` for every host, port, database and user: "*:*:*:*:" and the
/// password with '\' and ':' escaped, then a newline. nullopt for a password
/// with a line break, which no password file can hold. Thread-safe.
ZKLOCK_EXPORT std::optional<std::string> pgpass_line(std::string_view password);

} // namespace zklock
