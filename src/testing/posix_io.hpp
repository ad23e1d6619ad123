// Small blocking socket helpers shared by the real-server fixtures (probes of
// ZooKeeper's four-letter words, Redis RESP, PostgreSQL's startup packet).
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
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
    Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    [[nodiscard]] int get() const noexcept { return fd_; }
    /// Gives the descriptor away: the caller closes it.
    [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

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

/// A non-blocking TCP connection to 127.0.0.1:`port`, connected before `deadline`.
/// Throws std::system_error (connection_refused, timed_out, ...) naming `what`.
inline Socket connect_loopback(std::uint16_t port, steady::time_point deadline, const std::string& what) {
    Socket sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (sock.get() < 0) throw_errno(errno, what);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    if (::connect(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno != EINPROGRESS) throw_errno(errno, what);
        wait_for(sock.get(), POLLOUT, deadline, what);
        int err = 0;
        socklen_t len = sizeof err;
        if (::getsockopt(sock.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) throw_errno(errno, what);
        if (err != 0) throw_errno(err, what);
    }
    return sock;
}

/// Sends all of `data` before `deadline`. Throws std::system_error naming `what`.
inline void send_all(int fd, std::string_view data, steady::time_point deadline, const std::string& what) {
    std::size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n >= 0) {
            sent += static_cast<std::size_t>(n);
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            wait_for(fd, POLLOUT, deadline, what);
        } else if (errno != EINTR) {
            throw_errno(errno, what);
        }
    }
}

} // namespace zklock::testing::posix_io
