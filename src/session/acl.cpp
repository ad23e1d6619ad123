#include <zklock/acl.hpp>
#include <zklock/error.hpp>

#include "session/auth_file_text.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zklock {
namespace {

constexpr std::string_view perm_letters = "cdrwa";
constexpr std::uint32_t perm_bits[] = {perms::create, perms::remove, perms::read, perms::write, perms::admin};

std::error_code refuse(std::string* reason, std::string why) {
    if (reason) *reason = std::move(why);
    return make_error_code(errc::invalid_argument);
}

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

} // namespace

namespace acls {
acl_list open_unsafe() { return {{"world", "anyone", perms::all}}; }
acl_list creator_all() { return {{"auth", "", perms::all}}; }
acl_list creator_all_world_read() { return {{"auth", "", perms::all}, {"world", "anyone", perms::read}}; }
} // namespace acls

std::string digest_id(std::string_view user, std::string_view password) {
    std::string text(user);
    text += ':';
    text += password;
    unsigned char sha[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(text.data(), text.size(), sha, &len, EVP_sha1(), nullptr) != 1)
        throw error(make_error_code(errc::system_error), "zklock::digest_id: SHA-1 unavailable");
    std::memset(text.data(), 0, text.size());
    unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    const int n = EVP_EncodeBlock(b64, sha, static_cast<int>(len));
    return std::string(user) + ":" + std::string(reinterpret_cast<const char*>(b64), static_cast<std::size_t>(n));
}

acl_entry digest_acl(std::string_view user, std::string_view password, std::uint32_t mask) {
    return {"digest", digest_id(user, password), mask};
}

acl_entry world_acl(std::uint32_t mask) { return {"world", "anyone", mask}; }

std::string perms_to_string(std::uint32_t mask) {
    std::string out;
    for (std::size_t i = 0; i < perm_letters.size(); ++i)
        if (mask & perm_bits[i]) out += perm_letters[i];
    return out;
}

std::string to_string(const acl_entry& e) { return e.scheme + ":" + e.id + ":" + perms_to_string(e.perms); }

std::string to_string(const acl_list& acl) {
    std::string out;
    for (const auto& e : acl) {
        if (!out.empty()) out += ',';
        out += to_string(e);
    }
    return out;
}

acl_list parse_acl(std::string_view text, std::error_code& ec, std::string* reason) {
    ec.clear();
    acl_list out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto end = std::min(text.find(',', start), text.size());
        const std::string item = trim(text.substr(start, end - start));
        start = end + 1;
        const auto first = item.find(':');
        const auto last = item.rfind(':');
        if (item.empty() || first == std::string::npos || first == last) {
            ec = refuse(reason, "ACL entry '" + item + "' is not scheme:id:perms (e.g. auth::cdrwa, world:anyone:r)");
            return {};
        }
        acl_entry e{item.substr(0, first), item.substr(first + 1, last - first - 1), 0};
        if (e.scheme.empty()) {
            ec = refuse(reason, "ACL entry '" + item + "' has no scheme");
            return {};
        }
        for (char c : item.substr(last + 1)) {
            const auto at = perm_letters.find(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
            if (at == std::string_view::npos) {
                ec = refuse(reason, "ACL entry '" + item + "': unknown permission '" + std::string(1, c) +
                                        "' (use the letters c d r w a)");
                return {};
            }
            e.perms |= perm_bits[at];
        }
        if (e.perms == 0) {
            ec = refuse(reason, "ACL entry '" + item + "' grants no permission");
            return {};
        }
        out.push_back(std::move(e));
    }
    return out;
}

acl_list parse_acl(std::string_view text) {
    std::error_code ec;
    std::string reason;
    auto out = parse_acl(text, ec, &reason);
    if (ec) throw error(ec, "zklock::parse_acl: " + reason);
    return out;
}

auth_entry parse_auth(std::string_view text, std::error_code& ec, std::string* reason) {
    ec.clear();
    const auto colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0) {
        ec = refuse(reason, "an auth entry is scheme:credentials (e.g. digest:user:password)");
        return {};
    }
    auth_entry e{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
    if (const auto bad = validate_auth({e}, reason)) {
        ec = bad;
        return {};
    }
    return e;
}

std::string identity(const auth_entry& e) {
    if (e.scheme == "digest") return "digest:" + e.credentials.substr(0, e.credentials.find(':'));
    return e.scheme;
}

std::string identity(const std::vector<auth_entry>& auth) {
    if (auth.empty()) return "anyone (no authentication)";
    std::string out;
    for (const auto& e : auth) {
        if (!out.empty()) out += ", ";
        out += identity(e);
    }
    return out;
}

std::error_code validate_auth(const std::vector<auth_entry>& auth, std::string* reason) {
    for (const auto& e : auth) {
        if (e.scheme.empty() || e.scheme.find_first_of(": \t\r\n") != std::string::npos)
            return refuse(reason, "auth scheme '" + e.scheme + "' is empty or holds ':' or white space");
        if (e.scheme == "digest") {
            const auto colon = e.credentials.find(':');
            if (colon == std::string::npos || colon == 0)
                return refuse(reason, "digest credentials must be user:password (for " + identity(e) + ")");
        }
        if (e.credentials.find_first_of("\r\n") != std::string::npos)
            return refuse(reason, "credentials of " + identity(e) + " hold a line break");
    }
    return {};
}

std::error_code validate_acl(const acl_list& acl, bool has_auth, std::string* reason) {
    if (acl.empty()) return refuse(reason, "the ACL is empty (the server refuses a node nobody may use)");
    for (const auto& e : acl) {
        if (e.scheme.empty()) return refuse(reason, "ACL entry '" + to_string(e) + "' has no scheme");
        if (e.perms == 0 || (e.perms & ~perms::all))
            return refuse(reason, "ACL entry '" + e.scheme + ":" + e.id + "' has permissions outside cdrwa (" +
                                      std::to_string(e.perms) + ")");
        if (e.scheme == "auth" && !has_auth)
            return refuse(reason, "ACL entry '" + to_string(e) +
                                      "' names the creator's identities, but the session authenticates as nobody "
                                      "(set SessionOptions::auth, or --auth-file)");
    }
    return {};
}

std::vector<auth_entry> read_auth_file(const std::string& path, std::error_code& ec, std::string* reason) {
    ec.clear();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        ec = refuse(reason, "cannot open auth file " + path + ": " + std::strerror(errno));
        return {};
    }
    struct stat st {};
    const int rc = ::fstat(fd, &st);
    std::string content;
    if (rc == 0 && S_ISREG(st.st_mode) && !(st.st_mode & (S_IRWXG | S_IRWXO))) {
        char buf[4096];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0) content.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (rc != 0 || !S_ISREG(st.st_mode)) {
        ec = refuse(reason, "auth file " + path + " is not a regular file");
        return {};
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        ec = refuse(reason, "auth file " + path + " is accessible by group or others (mode " + mode +
                                "); make it private: chmod 600 " + path);
        return {};
    }
    auto out = detail::parse_auth_file_text(content, path, ec, reason);
    std::memset(content.data(), 0, content.size());
    return out;
}

} // namespace zklock
