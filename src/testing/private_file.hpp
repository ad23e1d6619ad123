// A file only its owner may read: where the fixtures put the secrets a server
// reads (Redis's requirepass and ACL users, PostgreSQL's initdb --pwfile), so
// that no secret is ever on a command line.
#pragma once

#include "testing/posix_io.hpp"

#include <filesystem>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zklock::testing::posix_io {

/// Creates `path` (it must not exist) with mode 0600 from the start, owned by
/// `uid`:`gid` when given (-1: this process's), and writes `content` into it.
/// Throws std::system_error.
inline void write_private_file(const std::filesystem::path& path, std::string_view content, uid_t uid = uid_t(-1),
                               gid_t gid = gid_t(-1)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw_errno(errno, "create " + path.string());
    Socket file(fd);  // closes it
    if ((uid != uid_t(-1) || gid != gid_t(-1)) && ::fchown(fd, uid, gid) != 0)
        throw_errno(errno, "chown " + path.string());
    while (!content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_errno(errno, "write " + path.string());
        }
        content.remove_prefix(static_cast<std::size_t>(n));
    }
}

} // namespace zklock::testing::posix_io
