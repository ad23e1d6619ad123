#include "zklock/testing/process.hpp"

#include "testing/posix_io.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace zklock::testing {

std::vector<std::uint16_t> free_loopback_ports(std::size_t n) {
    std::vector<std::optional<posix_io::Socket>> sockets(n);
    std::vector<std::uint16_t> ports;
    ports.reserve(n);
    for (auto& s : sockets) {
        s.emplace(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (s->get() < 0) posix_io::throw_errno(errno, "free_loopback_port: socket");
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        if (::bind(s->get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            posix_io::throw_errno(errno, "free_loopback_port: bind 127.0.0.1:0");
        }
        socklen_t len = sizeof addr;
        if (::getsockname(s->get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            posix_io::throw_errno(errno, "free_loopback_port: getsockname");
        }
        ports.push_back(ntohs(addr.sin_port));
    }
    return ports;
}

std::uint16_t free_loopback_port() { return free_loopback_ports(1).front(); }

}  // namespace zklock::testing
