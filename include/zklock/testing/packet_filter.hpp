// Packets dropped by the kernel: iptables DROP rules on the loopback
// interface, owned by an object that removes them when it is destroyed.
//
// This is how the fault kit cuts TCP connections between processes on this
// machine without closing them (FaultyLink::blackhole(), Ensemble::partition()):
// the packets vanish in both directions, the sockets stay open, the peers see
// silence, as with a network partition (Jepsen partitions the same way). The
// kernel here has no netem, so there is no packet delay in the kernel; see
// FaultyLink::delay().
//
// Requirements: the iptables command (Debian package `iptables`; looked up in
// PATH, then /usr/sbin and /sbin) and the right to change the firewall (root,
// or CAP_NET_ADMIN). PacketFilter::unavailable() says why not; tests skip
// with that reason (GTEST_SKIP).
//
// Which rules: every rule goes into the INPUT chain of the current network
// namespace, matches TCP on the loopback interface only (`-i lo -p tcp`) by
// port, and carries the comment "zklock-testing pid=PID LABEL", so a rule left
// behind by a killed test process can be found (zklock_packet_rules()) and
// removed by hand (`iptables -D INPUT` with the spec `iptables -S INPUT`
// shows). A PacketFilter removes exactly the rules it added (by their full
// spec, comment included) and never touches any other rule.
//
// Thread-safety: PacketFilter is not thread-safe; use one object from one
// thread. The free functions are safe to call concurrently.
#pragma once

#include <zklock/testing/export.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace zklock::testing {

/// TCP packets on the loopback interface, by port; 0 matches any port.
struct TcpPacketMatch {
    /// The TCP source port to match (0: any).
    std::uint16_t source_port = 0;
    /// The TCP destination port to match (0: any).
    std::uint16_t destination_port = 0;

    /// Equal when every field is.
    friend bool operator==(const TcpPacketMatch&, const TcpPacketMatch&) = default;
};

/// A set of iptables DROP rules that lives as long as the object.
class ZKLOCK_TESTING_EXPORT PacketFilter {
public:
    /// An empty filter; `label` goes into every rule's comment (e.g.
    /// "link 127.0.0.1:40123"; letters, digits, spaces and ".:-_/" only).
    /// Adds no rule yet, needs no root yet.
    explicit PacketFilter(std::string label);
    /// clear(); errors are ignored.
    ~PacketFilter();
    /// Takes over `other`'s rule: it is removed once, by the object that holds it last.
    PacketFilter(PacketFilter&& other) noexcept;
    /// Removes this object's rule, then takes over `other`'s.
    PacketFilter& operator=(PacketFilter&& other) noexcept;
    PacketFilter(const PacketFilter&) = delete;
    PacketFilter& operator=(const PacketFilter&) = delete;

    /// Drops the matching packets from now on (inserted first in INPUT, so no
    /// earlier ACCEPT rule lets them through). Throws std::runtime_error with
    /// iptables' message when it fails (e.g. unavailable()).
    void drop(const TcpPacketMatch& match);
    /// Removes every rule this object added (heals). Throws std::runtime_error
    /// naming the rules it could not remove, after trying them all.
    void clear();
    /// The rules in force, in the order added.
    [[nodiscard]] const std::vector<TcpPacketMatch>& rules() const noexcept;
    /// The comment every rule of this object carries.
    [[nodiscard]] const std::string& comment() const noexcept;
    /// How many packets this object's rules have dropped so far (the kernel's
    /// counters, `iptables -v -S INPUT`); 0 without rules. Lets a test wait
    /// until a fault has really hit traffic instead of sleeping. Throws
    /// std::runtime_error when iptables cannot list the rules.
    [[nodiscard]] std::uint64_t dropped_packets() const;

    /// nullopt when iptables can be run and changed here; otherwise why not
    /// ("iptables not found", iptables' own "Permission denied (you must be
    /// root)", ...). Asked once per process.
    [[nodiscard]] static std::optional<std::string> unavailable();

private:
    std::string comment_;
    std::vector<TcpPacketMatch> rules_;
};

/// The rules of INPUT (as `iptables -S INPUT` prints them) that carry a
/// zklock-testing comment; only those of process `owner` when it is not 0.
/// Throws std::runtime_error when iptables cannot list them.
ZKLOCK_TESTING_EXPORT std::vector<std::string> zklock_packet_rules(pid_t owner = 0);

/// Pure helpers (exposed for unit tests).
/// "zklock-testing pid=PID LABEL". Throws std::invalid_argument for a label
/// with other characters than letters, digits, spaces and ".:-_/".
ZKLOCK_TESTING_EXPORT std::string packet_rule_comment(pid_t pid, std::string_view label);
/// The iptables arguments after "-I INPUT 1" / "-D INPUT" for one rule:
/// "-i lo -p tcp [--sport S] [--dport D] -m comment --comment C -j DROP".
ZKLOCK_TESTING_EXPORT std::vector<std::string> packet_rule_spec(const TcpPacketMatch& match, const std::string& comment);
/// The sum of the packet counters ("-c PACKETS BYTES") of the rules in
/// `iptables -v -S` output whose comment is exactly `comment`.
ZKLOCK_TESTING_EXPORT std::uint64_t dropped_packets_in(std::string_view iptables_v_s_output, std::string_view comment);
/// The lines of `iptables -S` output that carry a zklock-testing comment
/// (of process `owner` only, when not 0).
ZKLOCK_TESTING_EXPORT std::vector<std::string> zklock_rules_in(std::string_view iptables_s_output, pid_t owner);

}  // namespace zklock::testing
