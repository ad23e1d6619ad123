// A network link with faults between a client and a server on this machine:
// the client connects through it (its connect string names the link's port)
// and a test delays, cuts, resets the link, or lets one request through and
// loses its reply.
//
//     testing::ZooKeeperServer server;
//     testing::FaultyLink link(server.port());
//     SessionOptions o;
//     o.connect = link.connect_string();        // the client talks through the link
//     ...
//     link.blackhole();   // packets dropped both ways, connections stay open (a partition)
//     link.heal();
//     link.reset();       // every connection torn down with RST
//     link.drop_next_reply("/locks/job");      // the next request naming it reaches the
//                                              // server, its reply never reaches the client
//     link.garble_next_reply("/locks/job");    // ... its reply reaches the client with a wrong xid
//     link.delay(50ms);   // every byte, both ways, 50 ms late
//
// How: a small TCP proxy on 127.0.0.1 (Boost.Asio, one thread of its own,
// named "zklock-link") forwards each accepted connection to
// 127.0.0.1:target_port over a connection of its own. The kernel drops the
// packets of a blackhole (iptables, see packet_filter.hpp), so the client's
// TCP really sees silence; the proxy itself does only what iptables cannot
// (this kernel has no netem): delay, reset, and losing exactly one reply.
//
// Requirements: blackhole() needs iptables and root (PacketFilter::
// unavailable() says why not; it throws without them). Everything else needs
// nothing. Nothing but 127.0.0.1 is contacted.
//
// Cleanup: the destructor closes every connection (the client sees its
// connection closed), stops and joins the thread, and removes the blackhole's
// iptables rules, also when a test fails.
//
// Thread-safety: every member function may be called from any thread,
// concurrently; none may be called from the link's own thread.
#pragma once

#include <zklock/testing/export.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace zklock::testing {

/// A loopback TCP proxy with faults. See the file comment.
class ZKLOCK_TESTING_EXPORT FaultyLink {
public:
    /// Listens on a free port of 127.0.0.1 (port()) and forwards every
    /// connection to 127.0.0.1:target_port. The target need not listen yet: a
    /// connection the target refuses is closed. Throws std::system_error when
    /// it cannot listen.
    explicit FaultyLink(std::uint16_t target_port);
    /// Closes every connection, stops the thread, heals a blackhole. Never throws.
    ~FaultyLink();

    FaultyLink(const FaultyLink&) = delete;
    FaultyLink& operator=(const FaultyLink&) = delete;
    FaultyLink(FaultyLink&&) = delete;
    FaultyLink& operator=(FaultyLink&&) = delete;

    /// The port clients connect to, on 127.0.0.1.
    [[nodiscard]] std::uint16_t port() const noexcept;
    /// The server's port the link forwards to.
    [[nodiscard]] std::uint16_t target_port() const noexcept;
    /// "127.0.0.1:PORT" for the client.
    [[nodiscard]] std::string connect_string() const;

    /// Every chunk of bytes, in both directions, is forwarded `latency` after
    /// the link read it (order kept; throughput is not limited). Applies to
    /// what is read from now on, on every connection. 0 (the default): none.
    void delay(std::chrono::milliseconds latency);
    /// The delay added to every byte relayed now.
    [[nodiscard]] std::chrono::milliseconds delay() const noexcept;

    /// The kernel drops every packet between the clients and the link, both
    /// ways (iptables DROP on the link's port): open connections stay open
    /// and silent, new connections get no answer to their SYN. The link keeps
    /// its connections to the server, which therefore hears nothing from the
    /// clients (their sessions expire there, as in a partition). Throws
    /// std::runtime_error without iptables or root. No-op when blackholed.
    void blackhole();
    /// Removes the blackhole's rules: TCP retransmits what was dropped and the
    /// connections carry on (or the client has meanwhile given up on them and
    /// connects again). Throws std::runtime_error when a rule cannot be
    /// removed. No-op when not blackholed.
    void heal();
    /// True while the link drops what it relays.
    [[nodiscard]] bool blackholed() const;
    /// Packets the current blackhole has dropped so far (0 when not
    /// blackholed): wait until it is > 0 to know the fault hit the traffic.
    [[nodiscard]] std::uint64_t blackholed_packets() const;

    /// Tears down every open connection with RST on both sides (SO_LINGER 0):
    /// the client sees ECONNRESET, the server a reset connection. New
    /// connections work as before. Returns how many were reset; the resets
    /// have happened when it returns.
    std::size_t reset();

    /// Loses the reply to the next request: the next chunk a client sends
    /// whose bytes contain `request_contains` (any chunk when empty) goes to
    /// the server as usual, and when the server's next bytes on that
    /// connection arrive (its reply, as the server answers in order) the link
    /// discards them and resets the client's connection (RST), then closes
    /// its connection to the server. So the server has acted on the request
    /// and the client never hears of it: the lost create reply that protected
    /// lock names exist for. Fires once; a later call arms it again (the
    /// needle is matched across reads of one connection). ZooKeeper requests
    /// hold their path in clear, so a lock path makes a good needle.
    void drop_next_reply(std::string request_contains = {});
    /// Garbles the reply to the next request: as drop_next_reply() the next
    /// chunk a client sends whose bytes contain `request_contains` goes to the
    /// server, and the server's next bytes on that connection (its reply) reach
    /// the client with the xid in the first reply header changed, as if the
    /// server had answered out of order (a ZooKeeper server does when it shuts
    /// down mid-request). The ZooKeeper C client then fails every pending
    /// request with ZRUNTIMEINCONSISTENCY and reconnects; the server has acted
    /// on the request. Fires once; replaces a pending drop_next_reply().
    void garble_next_reply(std::string request_contains = {});
    /// How many replies were garbled this way so far.
    [[nodiscard]] std::size_t replies_garbled() const noexcept;
    /// True between drop_next_reply() (or garble_next_reply()) and the request that matched it.
    [[nodiscard]] bool drop_armed() const;
    /// How many replies were lost this way so far.
    [[nodiscard]] std::size_t replies_dropped() const noexcept;

    /// Connections open through the link now, and accepted in total.
    [[nodiscard]] std::size_t open_connections() const noexcept;
    /// How many client connections the link has accepted so far.
    [[nodiscard]] std::size_t accepted_connections() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace zklock::testing
