// Which packets to drop to cut one ensemble node off from the others while its
// clients still reach it (Ensemble::partition()). Pure.
#pragma once

#include "testing/tcp_sockets.hpp"

#include "zklock/testing/packet_filter.hpp"

#include <cstdint>
#include <vector>

namespace zklock::testing::detail {

/// A node's three ports on 127.0.0.1.
struct NodePorts {
    std::uint16_t client = 0;
    std::uint16_t quorum = 0;    ///< where a leader accepts its followers
    std::uint16_t election = 0;  ///< where leader election connections arrive
};

/// Everything to and from the node's quorum and election ports (both ways,
/// new connections included), plus each established connection the node
/// opened itself (from an ephemeral port) to a peer's quorum or election
/// port, matched by both ports in both directions. ZooKeeper keeps its
/// election connections open, so those are all the node's links to its peers;
/// traffic to node.client is left alone. Duplicates are removed.
std::vector<TcpPacketMatch> partition_rules(const NodePorts& node, const std::vector<NodePorts>& peers,
                                            const std::vector<TcpSocket>& node_sockets);

}  // namespace zklock::testing::detail
