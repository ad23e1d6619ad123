// The TCP sockets a process holds, read from /proc: which connections a
// ZooKeeper server has opened to its peers (Ensemble::partition()).
#pragma once


#include <cstdint>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace zklock::testing::detail {

struct TcpSocket {
    std::uint16_t local_port = 0;
    std::uint16_t remote_port = 0;  ///< 0 for a listening socket
    unsigned state = 0;             ///< the kernel's TCP state: 1 established, 10 listen
    std::uint64_t inode = 0;

    friend bool operator==(const TcpSocket&, const TcpSocket&) = default;
};

inline constexpr unsigned tcp_established = 1;

/// The sockets of a /proc/net/tcp or /proc/net/tcp6 table (the header line and
/// malformed lines are skipped). Pure.
std::vector<TcpSocket> parse_proc_net_tcp(std::string_view table);

/// The TCP sockets (IPv4 and IPv6) that process `pid` holds open: the entries of
/// its network namespace's tables whose inode is one of its descriptors. Empty
/// when the process is gone or cannot be inspected.
std::vector<TcpSocket> tcp_sockets_of(pid_t pid);

}  // namespace zklock::testing::detail
