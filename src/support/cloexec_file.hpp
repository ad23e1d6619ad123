// Whole files read and written through close-on-exec descriptors, for the
// fixtures. std::ifstream and std::ofstream open theirs without O_CLOEXEC: a
// program another thread starts meanwhile (the servers, std::system) would
// inherit it.
#pragma once

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

namespace zklock::testing::detail {

/// The bytes of `path` from `offset` on (all of it by default; from the last
/// `tail` bytes when `tail` is not 0); "" when it cannot be read.
inline std::string read_file_cloexec(const std::filesystem::path& path, std::size_t tail = 0) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    if (tail != 0) {
        const off_t size = ::lseek(fd, 0, SEEK_END);
        ::lseek(fd, size > static_cast<off_t>(tail) ? size - static_cast<off_t>(tail) : 0, SEEK_SET);
    }
    std::string text;
    char buf[8192];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) text.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR) break;
    }
    ::close(fd);
    return text;
}

/// Replaces `path` with `text` (mode 0644 when created). Throws
/// std::system_error naming the file when it cannot.
inline void write_file_cloexec(const std::filesystem::path& path, std::string_view text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            ::close(fd);
            throw std::system_error(err, std::generic_category(), "cannot write " + path.string());
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
}

}  // namespace zklock::testing::detail
