// The descriptors a test process holds, for the close-on-exec tests: which
// are open, and which of those opened since a point a started program would
// inherit.
#pragma once

#include <cerrno>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <dirent.h>
#include <fcntl.h>

namespace zklock::test {

/// The descriptors open in this process now (the listing's own excluded).
inline std::set<int> open_descriptors() {
    std::set<int> out;
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) throw std::system_error(errno, std::generic_category(), "opendir /proc/self/fd");
    while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] == '.') continue;
        const int fd = std::stoi(e->d_name);
        if (fd != ::dirfd(dir)) out.insert(fd);
    }
    ::closedir(dir);
    return out;
}

/// What each descriptor opened since `before` is ("socket:[123]", a path), for
/// those a program started now would inherit (no FD_CLOEXEC).
inline std::vector<std::string> inheritable_since(const std::set<int>& before) {
    std::vector<std::string> out;
    for (const int fd : open_descriptors()) {
        if (before.count(fd)) continue;
        const int flags = ::fcntl(fd, F_GETFD);
        if (flags < 0 || (flags & FD_CLOEXEC)) continue;  // closed meanwhile, or close-on-exec
        std::error_code ec;
        const auto target = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
        out.push_back(std::to_string(fd) + " -> " + (ec ? std::string("?") : target.string()));
    }
    return out;
}

} // namespace zklock::test
