#include "descriptors.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace zklock::cli {
namespace {

std::vector<int>& inherited() {
    static std::vector<int> fds;
    return fds;
}

bool inheritable(int fd) {
    const int flags = ::fcntl(fd, F_GETFD);
    return flags >= 0 && !(flags & FD_CLOEXEC);
}

} // namespace

void snapshot_inherited_descriptors() noexcept {
    auto& out = inherited();
    out.clear();
    // opendir's own descriptor is close-on-exec, so it is not recorded.
    if (DIR* dir = ::opendir("/proc/self/fd")) {
        const int own = ::dirfd(dir);
        while (const dirent* entry = ::readdir(dir)) {
            char* end = nullptr;
            const long fd = std::strtol(entry->d_name, &end, 10);
            if (end == entry->d_name || *end != '\0' || fd <= 2 || fd == own || fd > INT_MAX) continue;
            if (inheritable(static_cast<int>(fd))) out.push_back(static_cast<int>(fd));
        }
        ::closedir(dir);
    } else {
        // No /proc: probe every descriptor the limit allows.
        const long max = std::min<long>(::sysconf(_SC_OPEN_MAX), 1 << 20);
        for (long fd = 3; fd < max; ++fd)
            if (inheritable(static_cast<int>(fd))) out.push_back(static_cast<int>(fd));
    }
    std::sort(out.begin(), out.end());
}

const std::vector<int>& inherited_descriptors() noexcept { return inherited(); }

std::vector<descriptor_range> descriptor_gaps(std::vector<int> keep) {
    std::sort(keep.begin(), keep.end());
    keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
    std::vector<descriptor_range> out;
    unsigned next = 3;  // the lowest descriptor not yet covered
    for (int fd : keep) {
        if (fd < static_cast<int>(next)) continue;
        const auto u = static_cast<unsigned>(fd);
        if (u > next) out.emplace_back(next, u - 1);
        next = u + 1;
    }
    out.emplace_back(next, UINT_MAX);  // next <= INT_MAX + 1: keep holds ints
    return out;
}

void close_descriptor_ranges(const descriptor_range* ranges, std::size_t count, long max_fd) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
        const auto [first, last] = ranges[i];
#ifdef SYS_close_range
        if (::syscall(SYS_close_range, first, last, 0) == 0) continue;
#endif
        for (long fd = first; fd < max_fd && static_cast<unsigned long>(fd) <= last; ++fd) ::close(static_cast<int>(fd));
    }
}

} // namespace zklock::cli
