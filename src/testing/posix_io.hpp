// Small blocking socket helpers shared by the real-server fixtures (probes of
// ZooKeeper's four-letter words, Redis RESP, PostgreSQL's startup packet).
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <system_error>

#include <poll.h>
#include <unistd.h>

namespace zklock::testing::posix_io {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

[[noreturn]] inline void throw_errno(int err, const std::string& what) {
    throw std::system_error(err, std::generic_category(), what);
}

class Socket {
public:
    explicit Socket(int fd) noexcept : fd_(fd) {}
    ~Socket() {
        if (fd_ >= 0) ::close(fd_);
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    [[nodiscard]] int get() const noexcept { return fd_; }

private:
    int fd_;
};

inline int remaining_ms(steady::time_point deadline) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - steady::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

inline void wait_for(int fd, short events, steady::time_point deadline, const std::string& what) {
    while (true) {
        const int left = remaining_ms(deadline);
        if (left == 0) throw_errno(ETIMEDOUT, what);
        pollfd p{fd, events, 0};
        const int r = ::poll(&p, 1, left);
        if (r > 0) return;
        if (r < 0 && errno != EINTR) throw_errno(errno, what);
    }
}

inline milliseconds until(steady::time_point deadline, milliseconds cap) {
    return std::clamp(std::chrono::duration_cast<milliseconds>(deadline - steady::now()), milliseconds(1), cap);
}

} // namespace zklock::testing::posix_io
