// A loopback port where the kernel completes TCP handshakes and nobody ever
// answers: a server that hangs, as opposed to a port that refuses. Connects to
// it end at their deadline, which is what tests of deadlines and of signals
// during a connect need (a refused port now fails at once).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::test {

class SilentListener {
public:
    SilentListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        EXPECT_GE(fd_, 0) << "socket()";
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        EXPECT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
        EXPECT_EQ(::listen(fd_, 64), 0);  // connections complete in the backlog; nothing reads them
        EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
        address_ = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    }
    ~SilentListener() {
        if (fd_ >= 0) ::close(fd_);
    }
    SilentListener(const SilentListener&) = delete;
    SilentListener& operator=(const SilentListener&) = delete;

    /// host:port of the listener.
    const std::string& address() const { return address_; }

private:
    int fd_;
    std::string address_;
};

} // namespace zklock::test
