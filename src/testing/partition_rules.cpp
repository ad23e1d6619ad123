#include "testing/partition_rules.hpp"

#include <algorithm>

namespace zklock::testing::detail {

std::vector<TcpPacketMatch> partition_rules(const NodePorts& node, const std::vector<NodePorts>& peers,
                                            const std::vector<TcpSocket>& node_sockets) {
    std::vector<TcpPacketMatch> rules;
    const auto add = [&rules](TcpPacketMatch m) {
        if (std::find(rules.begin(), rules.end(), m) == rules.end()) rules.push_back(m);
    };
    for (const std::uint16_t port : {node.quorum, node.election}) {
        if (port == 0) continue;
        add({0, port});
        add({port, 0});
    }
    const auto peer_port = [&peers](std::uint16_t port) {
        return port != 0 && std::any_of(peers.begin(), peers.end(), [port](const NodePorts& p) {
                   return p.quorum == port || p.election == port;
               });
    };
    for (const auto& s : node_sockets) {
        if (s.state != tcp_established || s.remote_port == 0) continue;
        if (s.local_port == node.client || s.local_port == node.quorum || s.local_port == node.election) continue;
        if (!peer_port(s.remote_port)) continue;
        add({s.local_port, s.remote_port});
        add({s.remote_port, s.local_port});
    }
    return rules;
}

}  // namespace zklock::testing::detail
