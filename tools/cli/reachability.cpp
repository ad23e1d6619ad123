#include "reachability.hpp"

#include "terminal_text.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::cli {
namespace {
using clock_type = std::chrono::steady_clock;

// One server's attempt: a socket per resolved address, and what came of it.
struct attempt {
    std::string server;
    std::vector<int> fds;     // connects in progress (-1: done)
    std::string unresolved;   // why the name did not resolve
    int last_error = 0;       // of the last address that failed
    bool connected = false;
};

std::string describe(int err) {
    switch (err) {
    case 0:
        return "accepts connections but gave no ZooKeeper session (not a ZooKeeper server, or one that does not "
               "serve: starting, or out of its quorum)";
    case ECONNREFUSED: return "connection refused (nothing listens on that port)";
    case ENETUNREACH:
    case EHOSTUNREACH: return std::string("unreachable (") + std::strerror(err) + ")";
    default: return std::strerror(err);
    }
}

void close_all(attempt& a) {
    for (int fd : a.fds)
        if (fd >= 0) ::close(fd);
    a.fds.clear();
}

bool pending(const attempt& a) {
    for (int fd : a.fds)
        if (fd >= 0) return true;
    return false;
}

} // namespace

std::pair<std::string, std::string> host_and_port(const std::string& server) {
    std::string host = server, port = "2181";
    if (const auto colon = host.rfind(':'); colon != std::string::npos && host.find(']', colon) == std::string::npos) {
        port = host.substr(colon + 1);
        host.resize(colon);
    }
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    return {host, port};
}

namespace {

// Starts the connects of one server, one per address its name resolves to.
void start(attempt& a) {
    const auto [host, port] = host_and_port(a.server);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
        a.unresolved = std::string("cannot resolve: ") + ::gai_strerror(rc);
        return;
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, &::freeaddrinfo);
    for (auto* ai = found; ai; ai = ai->ai_next) {
        const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            a.last_error = errno;
            continue;
        }
        if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            ::close(fd);
            a.connected = true;
            return close_all(a);
        }
        if (errno != EINPROGRESS) {
            a.last_error = errno;
            ::close(fd);
            continue;
        }
        a.fds.push_back(fd);
    }
}

} // namespace

std::vector<std::string> servers_of(std::string_view connect) {
    connect = connect.substr(0, connect.find('/'));
    std::vector<std::string> out;
    while (!connect.empty()) {
        const auto comma = connect.find(',');
        if (const auto s = connect.substr(0, comma); !s.empty()) out.emplace_back(s);
        if (comma == std::string_view::npos) break;
        connect.remove_prefix(comma + 1);
    }
    return out;
}

std::vector<std::string> unresolved_hosts(std::string_view connect) {
    std::vector<std::string> out;
    for (const auto& server : servers_of(connect)) {
        const auto [host, port] = host_and_port(server);
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
        if (rc == 0) {
            ::freeaddrinfo(found);
            continue;
        }
        out.push_back(shortened(host) + " (" + ::gai_strerror(rc) + ")");
    }
    return out;
}

std::string probe_servers(std::string_view connect, std::chrono::milliseconds budget) {
    std::vector<attempt> attempts;
    for (auto& server : servers_of(connect)) {
        attempts.emplace_back();
        attempts.back().server = std::move(server);
    }
    for (auto& a : attempts) start(a);
    const auto deadline = clock_type::now() + budget;
    for (;;) {
        std::vector<pollfd> polled;
        std::vector<attempt*> owner;
        for (auto& a : attempts)
            for (int fd : a.fds)
                if (fd >= 0) {
                    polled.push_back({fd, POLLOUT, 0});
                    owner.push_back(&a);
                }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
        if (polled.empty() || left.count() <= 0) break;
        if (::poll(polled.data(), polled.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
        for (std::size_t i = 0; i < polled.size(); ++i) {
            attempt& a = *owner[i];
            if (!polled[i].revents || !pending(a)) continue;
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(polled[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
            for (int& fd : a.fds)
                if (fd == polled[i].fd) {
                    ::close(fd);
                    fd = -1;
                }
            if (err == 0) {
                a.connected = true;
                close_all(a);
            } else {
                a.last_error = err;
            }
        }
    }
    std::string text;
    for (auto& a : attempts) {
        std::string outcome = !a.unresolved.empty() ? a.unresolved
                              : a.connected          ? describe(0)
                              : pending(a)           ? "no answer within " + std::to_string(budget.count()) + " ms"
                                                     : describe(a.last_error ? a.last_error : ECONNREFUSED);
        close_all(a);
        text += (text.empty() ? "" : "; ") + a.server + ": " + outcome;
    }
    return text;
}

} // namespace zklock::cli
