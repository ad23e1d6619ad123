// A loopback ZooKeeper ensemble for tests (Apache Curator's TestingCluster),
// and the faults of a quorum: kill the leader, partition a node from the others
// while its clients still reach it, find (and so pause) the server a session is
// connected to.
//
// Requirements: as ZooKeeperServer (Java, the Debian `zookeeper` package).
// partition() also needs iptables and root (see packet_filter.hpp);
// PacketFilter::unavailable() says why it cannot run.
//
// Thread-safety: Ensemble is not thread-safe; use one object from one thread,
// created on a thread that outlives it (see ChildProcess).
#pragma once

#include <zklock/testing/export.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zklock/testing/packet_filter.hpp"
#include "zklock/testing/process.hpp"
#include "zklock/testing/zookeeper_server.hpp"

namespace zklock::testing {

/// Options of an Ensemble. Every node gets the same settings: those of
/// ZooKeeperProcessOptions, and these.
struct EnsembleOptions : ZooKeeperProcessOptions {
    /// Number of servers. Default 3. 1 runs a single server in standalone mode.
    std::size_t size = 3;
    /// initLimit in ticks: how long a follower may take to connect and sync
    /// to a leader. Default 50 (5 s at the default tick).
    int init_limit = 50;
    /// syncLimit in ticks: how far a follower may lag before the leader drops
    /// it. Default 20 (2 s at the default tick).
    int sync_limit = 20;
    /// How long the constructor may take to get a quorum (and a restart() of
    /// one node to rejoin it). Default 60 s.
    std::chrono::milliseconds start_timeout{60000};
    /// Every node also serves TLS on a secure client port, as
    /// ZooKeeperServerOptions::tls does, with certificates of one CA made at
    /// start (certificates()). Default false.
    bool tls = false;
    /// The certificates made when `tls` is set.
    TestCertificateOptions tls_certificates;
};

/// N ZooKeeper servers forming one ensemble on 127.0.0.1, each with its own
/// directory, myid, client port and quorum/election ports. The servers start
/// concurrently; the constructor returns once every node answers `ruok` and
/// reports a Mode, with exactly one leader and the others followers.
///
/// Each node is a ZooKeeperServer (node(i)): kill9(), pause(), pause_for(),
/// restart() hit one server. The ensemble adds kill_leader(), partition(),
/// partition_leader(), heal() and node_of_session().
///
/// Errors: the constructor throws std::runtime_error (with every node's last
/// log lines) when no quorum forms within start_timeout or a node exits.
///
/// Destruction heals every partition (removes its iptables rules), stops every
/// node and removes all directories.
///
/// Thread-safety: not thread-safe; use from one thread.
class ZKLOCK_TESTING_EXPORT Ensemble {
public:
    /// Starts the servers and waits until the ensemble has a leader (throws otherwise).
    explicit Ensemble(EnsembleOptions options = {});
    ~Ensemble();

    Ensemble(const Ensemble&) = delete;
    Ensemble& operator=(const Ensemble&) = delete;
    Ensemble(Ensemble&&) = delete;
    Ensemble& operator=(Ensemble&&) = delete;

    /// How many servers the ensemble has.
    [[nodiscard]] std::size_t size() const noexcept;
    /// "127.0.0.1:P1,127.0.0.1:P2,..." in node order.
    [[nodiscard]] std::string connect_string() const;
    /// The same of the nodes' TLS ports (EnsembleOptions::tls); empty without TLS.
    [[nodiscard]] std::string secure_connect_string() const;
    /// The certificates every node serves with (its CA, a client certificate
    /// and key it accepts, an unrelated CA). Throws std::logic_error without TLS.
    [[nodiscard]] const TestCertificates& certificates() const;
    /// Node i (0-based; its myid is i + 1). Throws std::out_of_range.
    [[nodiscard]] ZooKeeperServer& node(std::size_t i);

    /// Index of the node whose `srvr` says "Mode: leader" ("standalone" for a
    /// single-node ensemble), asking every running, unpaused node that is not
    /// partitioned; nullopt when none does right now.
    [[nodiscard]] std::optional<std::size_t> leader_index();

    /// Waits until a majority of the nodes serve, every running unpaused node
    /// that is not partitioned reports a Mode, and exactly one of them is the
    /// leader. Returns false if that does not happen within timeout. Does not
    /// throw for a down node.
    [[nodiscard]] bool wait_for_quorum(std::chrono::milliseconds timeout);

    /// kill -9 of the current leader (leader_index()); returns its index. The
    /// others elect a new leader when they still form a majority (wait with
    /// wait_for_quorum() or leader_index()); node(i).restart() brings it back
    /// as a follower. Throws std::runtime_error when no node leads right now.
    std::size_t kill_leader();

    /// Cuts node i off from every other node: the kernel drops (iptables DROP,
    /// both ways, connections left open) all packets to and from its quorum
    /// and election ports and those of the connections it opened to its
    /// peers' ports, found in /proc. Its client port is left alone: clients
    /// still connect, and a leader cut off this way loses its quorum after
    /// syncLimit ticks, stops serving them and looks for a leader it cannot
    /// reach, while the others (if a majority) elect a new one among
    /// themselves. Several nodes may be partitioned at once (each from all).
    /// A connection the node opens after this call is not matched: ZooKeeper
    /// keeps its election connections open, so it opens none while its old
    /// ones are merely silent; after node(i).restart(), call partition(i)
    /// again. Needs root and iptables (throws std::runtime_error with
    /// PacketFilter::unavailable()'s reason, or when i is out of range or not
    /// running). No-op for a node already partitioned.
    void partition(std::size_t i);
    /// partition() of the current leader; returns its index. Throws
    /// std::runtime_error when no node leads right now.
    std::size_t partition_leader();
    /// Removes every partition's rules: the connections carry packets again
    /// (TCP retransmits what was dropped) and the cut-off nodes rejoin. Throws
    /// std::runtime_error when a rule cannot be removed.
    void heal();
    /// The partitioned nodes, in the order partitioned.
    [[nodiscard]] std::vector<std::size_t> partitioned() const;

    /// The node serving the session with this id (Session::session_id()), found
    /// in the `cons` answers of the running, unpaused nodes; nullopt when none
    /// lists it (e.g. while the client reconnects).
    [[nodiscard]] std::optional<std::size_t> node_of_session(std::int64_t session_id);

    /// The ensemble's root directory (one subdirectory per node).
    [[nodiscard]] const std::filesystem::path& directory() const noexcept;

private:
    enum class quorum_state { forming, ready, node_exited };
    // With exited == nullptr a node whose process died on its own counts as
    // down; otherwise it ends the check with node_exited and a description.
    quorum_state check_quorum(std::chrono::milliseconds per_node_timeout, std::string* exited);
    [[nodiscard]] bool is_partitioned(std::size_t i) const;

    TempDir root_;
    std::optional<TestCertificates> certificates_;
    std::vector<std::unique_ptr<ZooKeeperServer>> nodes_;
    struct Partition {
        std::size_t node;
        PacketFilter filter;
    };
    std::vector<Partition> partitions_;
};

}  // namespace zklock::testing
