// validate_tls (zklock/tls_options.hpp): the TLS files checked before any
// connection, as the auth file is.
#include <zklock/error.hpp>
#include <zklock/tls_options.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zklock {
namespace {

std::error_code refuse_tls(std::string* reason, std::string why) {
    if (reason) *reason = std::move(why);
    return make_error_code(errc::invalid_argument);
}

/// Empty when `path` opens for reading as a regular file (and, with
/// `must_be_private`, neither group nor others may access it); else why not.
std::string file_problem(const char* what, const std::string& path, bool must_be_private) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return std::string("cannot open TLS ") + what + " " + path + ": " + std::strerror(errno);
    struct stat st {};
    const int rc = ::fstat(fd, &st);
    ::close(fd);
    if (rc != 0 || !S_ISREG(st.st_mode)) return std::string("TLS ") + what + " " + path + " is not a regular file";
    if (must_be_private && (st.st_mode & (S_IRWXG | S_IRWXO))) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return std::string("TLS ") + what + " " + path + " is accessible by group or others (mode " + mode +
               "); make it private: chmod 600 " + path;
    }
    return {};
}

} // namespace

std::error_code validate_tls(const TlsOptions& tls, std::string* reason) {
    if (!tls.enabled()) return {};
    if (tls.cert_file.empty() != tls.key_file.empty())
        return refuse_tls(reason, tls.cert_file.empty() ? "a TLS key file needs its certificate file (cert_file, --tls-cert)"
                                                    : "a TLS certificate file needs its key file (key_file, --tls-key)");
    if (!tls.ca_file.empty())
        if (auto p = file_problem("CA file", tls.ca_file, false); !p.empty()) return refuse_tls(reason, std::move(p));
    if (!tls.cert_file.empty())
        if (auto p = file_problem("certificate file", tls.cert_file, false); !p.empty())
            return refuse_tls(reason, std::move(p));
    if (!tls.key_file.empty())
        if (auto p = file_problem("key file", tls.key_file, true); !p.empty()) return refuse_tls(reason, std::move(p));
    return {};
}

} // namespace zklock
