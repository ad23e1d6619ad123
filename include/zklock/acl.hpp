// ZooKeeper authentication and ACLs: who a Session is, and who may do what
// with the nodes zklock creates.
//
// ZooKeeper checks create and delete against the ACL of the PARENT node: a lock
// is protected by the ACL of its lock directory (and of the container nodes
// above it), not by the ACL of the lock nodes themselves. zklock applies the
// ACL policy (SessionOptions::acl, or the per-lock override) to every directory
// and container it creates and to every lock node.
//
// Digest authentication (`digest:user:password`) accepts any user:password
// pair: it only names an identity. A wrong password shows up later, as
// errc::no_auth on the first operation against a directory that identity may
// not touch. The credentials cross the network in clear text unless the
// Session uses TLS (SessionOptions::tls; Debian's C client has no SASL). Over
// TLS with a client certificate the server also knows the session as
// `x509:<subject DN>`, which an ACL entry may name (e.g. x509:CN=worker-7).
#pragma once

#include <zklock/export.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace zklock {

/// Permission bits of an ACL entry, as ZooKeeper numbers them.
namespace perms {
inline constexpr std::uint32_t read = 1;    ///< r: getData, getChildren, getACL
inline constexpr std::uint32_t write = 2;   ///< w: setData
inline constexpr std::uint32_t create = 4;  ///< c: create children
inline constexpr std::uint32_t remove = 8;  ///< d: delete children
inline constexpr std::uint32_t admin = 16;  ///< a: setACL
inline constexpr std::uint32_t all = 31;    ///< cdrwa
} // namespace perms

/// One entry of a ZooKeeper ACL: `scheme:id` may do `perms`.
struct acl_entry {
    std::string scheme;               ///< "world", "auth", "digest", "ip", ...
    std::string id;                   ///< "anyone", "" (auth), "user:BASE64(SHA1)" (digest), "10.0.0.0/8" (ip)
    std::uint32_t perms = perms::all; ///< a mask of zklock::perms
    /// Equal when every field is.
    friend bool operator==(const acl_entry&, const acl_entry&) = default;
};

/// An ACL: the list of entries a node carries.
using acl_list = std::vector<acl_entry>;

/// One authentication a Session adds to every connection (zoo_add_auth).
/// Never printed by zklock: identity() names it without the secret.
struct auth_entry {
    /// "digest" (the only scheme Debian's C client can use without SASL/TLS),
    /// or any scheme the server has a provider for. Default "digest".
    std::string scheme = "digest";
    /// digest: "user:password".
    std::string credentials;
    /// Equal when every field is.
    friend bool operator==(const auth_entry&, const auth_entry&) = default;
};

/// The common ACL policies.
namespace acls {
/// world:anyone:cdrwa: anyone may do anything (ZooKeeper's OPEN_ACL_UNSAFE).
/// The default policy: locks are not protected from other clients.
ZKLOCK_EXPORT acl_list open_unsafe();
/// auth::cdrwa: every identity the creating session authenticated as may do
/// everything, nobody else anything (ZooKeeper's CREATOR_ALL_ACL). Needs
/// SessionOptions::auth. `zklock status` then needs the same identity.
ZKLOCK_EXPORT acl_list creator_all();
/// auth::cdrwa plus world:anyone:r: only the creator's identities may take,
/// release or change the lock; anyone may read the queue (`zklock status`).
ZKLOCK_EXPORT acl_list creator_all_world_read();
} // namespace acls

/// The digest id of `user` with `password`, as the server computes it:
/// "user:" + base64(sha1("user:password")).
ZKLOCK_EXPORT std::string digest_id(std::string_view user, std::string_view password);
/// An entry for one digest identity: digest:user:BASE64(SHA1):perms.
ZKLOCK_EXPORT acl_entry digest_acl(std::string_view user, std::string_view password, std::uint32_t perms = perms::all);
/// world:anyone with `perms`.
ZKLOCK_EXPORT acl_entry world_acl(std::uint32_t perms);

/// "cdrwa"-style text of a permission mask (letters in ZooKeeper's order c d r w a).
ZKLOCK_EXPORT std::string perms_to_string(std::uint32_t mask);
/// An entry in ZooKeeper's (zkCli's) syntax: "scheme:id:perms", e.g. "auth::cdrwa".
ZKLOCK_EXPORT std::string to_string(const acl_entry& entry);
/// A list as comma-separated entries.
ZKLOCK_EXPORT std::string to_string(const acl_list& acl);

/// Parses an ACL in zkCli's syntax: entries "scheme:id:perms" separated by ','
/// (e.g. "auth::cdrwa,world:anyone:r", "digest:alice:X/Y1z=:cdrwa",
/// "ip:10.0.0.0/8:r"). The id may contain ':' (the permissions follow the last
/// one). Errors: errc::invalid_argument with a reason in `reason`.
ZKLOCK_EXPORT acl_list parse_acl(std::string_view text, std::error_code& ec, std::string* reason = nullptr);
/// Same; throws zklock::error.
ZKLOCK_EXPORT acl_list parse_acl(std::string_view text);

/// Parses "scheme:credentials", e.g. "digest:alice:secret" (a line of an auth
/// file). Errors: errc::invalid_argument with a reason that never quotes the secret.
ZKLOCK_EXPORT auth_entry parse_auth(std::string_view text, std::error_code& ec, std::string* reason = nullptr);

/// The identity an auth entry names, without its secret: "digest:alice", or the
/// scheme alone for other schemes.
ZKLOCK_EXPORT std::string identity(const auth_entry& entry);
/// The identities of a list, comma-separated; "anyone (no authentication)" when empty.
ZKLOCK_EXPORT std::string identity(const std::vector<auth_entry>& auth);

/// Reads an auth file: one `scheme:credentials` per line (`digest:user:password`;
/// blank lines and lines starting with '#' are skipped). Refuses, with
/// errc::invalid_argument, a file that group or others may read or write (as ssh
/// does with private keys): a secret in a readable file is no secret.
ZKLOCK_EXPORT std::vector<auth_entry> read_auth_file(const std::string& path, std::error_code& ec, std::string* reason = nullptr);

/// Checks an auth list: known shape of every entry (digest needs "user:password").
/// Errors: errc::invalid_argument with a reason.
ZKLOCK_EXPORT std::error_code validate_auth(const std::vector<auth_entry>& auth, std::string* reason = nullptr);
/// Checks an ACL policy: not empty, known permission bits, and an `auth` entry
/// only when the session authenticates (`has_auth`), since the server refuses
/// such an ACL otherwise (errc::invalid_acl at create). Errors: errc::invalid_argument.
ZKLOCK_EXPORT std::error_code validate_acl(const acl_list& acl, bool has_auth, std::string* reason = nullptr);

} // namespace zklock
