#include "zklock/testing/ensemble.hpp"

#include "testing/partition_rules.hpp"
#include "testing/posix_io.hpp"
#include "testing/tcp_sockets.hpp"
#include "testing/zookeeper_config.hpp"

#include <algorithm>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <signal.h>

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;
using posix_io::until;

constexpr milliseconds quorum_poll_interval{25};
constexpr milliseconds quorum_probe_timeout{1000};

}  // namespace

Ensemble::Ensemble(EnsembleOptions options) : root_("zklock-ensemble-") {
    if (options.size == 0) throw std::invalid_argument("Ensemble: size must be at least 1");
    const std::size_t n = options.size;
    // Per node: client, quorum and election ports, and with TLS the secure one.
    const std::size_t per_node = options.tls ? 4 : 3;
    const auto ports = free_loopback_ports(per_node * n);
    if (options.tls) certificates_ = make_test_certificates(root_.path() / "tls", options.tls_certificates);
    std::string servers;
    for (std::size_t i = 0; i < n; ++i) {
        servers += "server." + std::to_string(i + 1) + "=127.0.0.1:" + std::to_string(ports[per_node * i + 1]) + ":" +
                   std::to_string(ports[per_node * i + 2]) + '\n';
    }
    const std::string netty = options.tls ? detail::netty_classpath : "";
    const ZooKeeperServer::Launch launch{options.java,
                                         detail::join_classpath(detail::join_classpath(options.classpath, netty),
                                                                options.logging_classpath),
                                         options.jvm_flags, options.quiet, options.start_timeout};
    for (std::size_t i = 0; i < n; ++i) {
        const auto dir = root_.path() / ("node" + std::to_string(i + 1));
        const auto data = dir / "data";
        std::filesystem::create_directories(data);
        detail::write_text_file(data / "myid", std::to_string(i + 1) + "\n");
        const auto port = [&](std::size_t k) { return ports[per_node * i + k]; };
        std::string config = detail::common_zoo_config(data, port(0), options.tick_time_ms,
                                                       options.min_session_timeout_ms, options.max_session_timeout_ms) +
                             "initLimit=" + std::to_string(options.init_limit) + "\n" +
                             "syncLimit=" + std::to_string(options.sync_limit) + "\n" + servers +
                             (certificates_ ? detail::tls_zoo_config(port(3), *certificates_) : std::string()) +
                             detail::config_lines(options.extra_config);
        nodes_.push_back(std::unique_ptr<ZooKeeperServer>(
            new ZooKeeperServer(dir, data, port(0), port(1), port(2), std::move(config), launch)));
        if (certificates_) {
            nodes_.back()->secure_port_ = port(3);
            nodes_.back()->certificates_ = *certificates_;
        }
    }
    for (auto& node : nodes_) node->spawn();

    const auto deadline = steady::now() + options.start_timeout;
    std::string why;
    while (true) {
        const auto state = check_quorum(until(deadline, quorum_probe_timeout), &why);
        // The secure ports open after the plain ones: a TLS client connecting
        // at once must not find one closed.
        const bool secure_ports_open = std::all_of(nodes_.begin(), nodes_.end(), [](const auto& node) {
            return node->secure_port() == 0 || detail::accepts_connections(node->secure_port());
        });
        if (state == quorum_state::ready && secure_ports_open) return;
        if (state == quorum_state::ready && steady::now() >= deadline) {
            why = "a secure client port did not open within " + std::to_string(options.start_timeout.count()) + " ms";
        }
        if (state == quorum_state::forming && steady::now() >= deadline) {
            why = "no quorum within " + std::to_string(options.start_timeout.count()) + " ms";
        }
        if (!why.empty()) {
            for (auto& node : nodes_) node->kill9();
            std::string message = "ZooKeeper ensemble in " + root_.path().string() + " failed to start: " + why;
            for (auto& node : nodes_) {
                message += "\n--- last lines of " + node->log_path().string() + " ---\n" + node->log_tail(20);
            }
            throw std::runtime_error(message);
        }
        std::this_thread::sleep_for(until(deadline, quorum_poll_interval));  // allowed: polling interval of a deadline wait
    }
}

Ensemble::~Ensemble() {
    try {
        heal();
    } catch (...) {
    }
    partitions_.clear();
    // SIGTERM to all first, so the nodes shut down in parallel.
    for (auto& node : nodes_) {
        if (auto* p = node->process()) {
            p->signal(SIGTERM);
            p->resume();
        }
    }
    for (auto& node : nodes_) {
        try {
            node->stop();
        } catch (...) {
        }
    }
}

std::size_t Ensemble::size() const noexcept { return nodes_.size(); }

std::string Ensemble::connect_string() const {
    std::string out;
    for (const auto& node : nodes_) {
        if (!out.empty()) out += ',';
        out += node->connect_string();
    }
    return out;
}

std::string Ensemble::secure_connect_string() const {
    std::string out;
    for (const auto& node : nodes_) {
        if (node->secure_port() == 0) continue;
        if (!out.empty()) out += ',';
        out += node->secure_connect_string();
    }
    return out;
}

const TestCertificates& Ensemble::certificates() const {
    if (!certificates_) throw std::logic_error("Ensemble::certificates(): the ensemble has no TLS");
    return *certificates_;
}

ZooKeeperServer& Ensemble::node(std::size_t i) {
    if (i >= nodes_.size()) {
        throw std::out_of_range("Ensemble::node: index " + std::to_string(i) + " >= size " +
                                std::to_string(nodes_.size()));
    }
    return *nodes_[i];
}

const std::filesystem::path& Ensemble::directory() const noexcept { return root_.path(); }

bool Ensemble::is_partitioned(std::size_t i) const {
    return std::any_of(partitions_.begin(), partitions_.end(), [i](const Partition& p) { return p.node == i; });
}

std::optional<std::size_t> Ensemble::leader_index() {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        auto& node = *nodes_[i];
        if (node.paused() || !node.running() || is_partitioned(i)) continue;
        try {
            const auto mode = server_mode(node.four_letter_word("srvr", quorum_probe_timeout));
            if (mode == "leader" || mode == "standalone") return i;
        } catch (const std::system_error&) {
        }
    }
    return std::nullopt;
}

Ensemble::quorum_state Ensemble::check_quorum(milliseconds per_node_timeout, std::string* exited) {
    std::size_t serving = 0;
    std::size_t leaders = 0;
    bool all_live_serving = true;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        auto& node = *nodes_[i];
        auto* process = node.process();
        if (process == nullptr) continue;
        if (!process->running()) {
            if (exited == nullptr) continue;
            *exited = "node " + node.connect_string() + ": the server process " +
                      describe_wait_status(process->exit_status().value_or(-1));
            return quorum_state::node_exited;
        }
        if (node.paused() || is_partitioned(i)) continue;
        std::optional<std::string> mode;
        try {
            if (node.four_letter_word("ruok", per_node_timeout) == "imok") {
                mode = server_mode(node.four_letter_word("srvr", per_node_timeout));
            }
        } catch (const std::system_error&) {
        }
        if (!mode) {
            all_live_serving = false;
            continue;
        }
        ++serving;
        if (*mode == "leader" || *mode == "standalone") ++leaders;
    }
    const bool ready = all_live_serving && leaders == 1 && serving >= nodes_.size() / 2 + 1;
    return ready ? quorum_state::ready : quorum_state::forming;
}

bool Ensemble::wait_for_quorum(milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    while (true) {
        if (check_quorum(until(deadline, quorum_probe_timeout), nullptr) == quorum_state::ready) return true;
        if (steady::now() >= deadline) return false;
        std::this_thread::sleep_for(until(deadline, quorum_poll_interval));  // allowed: polling interval of a deadline wait
    }
}

std::size_t Ensemble::kill_leader() {
    const auto leader = leader_index();
    if (!leader) throw std::runtime_error("Ensemble::kill_leader: no node leads right now");
    nodes_[*leader]->kill9();
    return *leader;
}

void Ensemble::partition(std::size_t i) {
    auto& target = node(i);
    if (is_partitioned(i)) return;
    if (const auto why = PacketFilter::unavailable()) {
        throw std::runtime_error("Ensemble::partition needs iptables: " + *why);
    }
    if (target.pid() <= 0) throw std::runtime_error("Ensemble::partition: node " + std::to_string(i) + " is not running");
    const auto ports = [](const ZooKeeperServer& s) {
        return detail::NodePorts{s.port(), s.quorum_port(), s.election_port()};
    };
    std::vector<detail::NodePorts> peers;
    for (std::size_t j = 0; j < nodes_.size(); ++j) {
        if (j != i) peers.push_back(ports(*nodes_[j]));
    }
    const auto rules = detail::partition_rules(ports(target), peers, detail::tcp_sockets_of(target.pid()));
    Partition p{i, PacketFilter("ensemble node " + std::to_string(i + 1) + " partition")};
    for (const auto& rule : rules) p.filter.drop(rule);  // on failure p's destructor removes what was added
    partitions_.push_back(std::move(p));
}

std::size_t Ensemble::partition_leader() {
    const auto leader = leader_index();
    if (!leader) throw std::runtime_error("Ensemble::partition_leader: no node leads right now");
    partition(*leader);
    return *leader;
}

void Ensemble::heal() {
    std::string failures;
    for (auto& p : partitions_) {
        try {
            p.filter.clear();
        } catch (const std::exception& e) {
            failures += std::string("\n") + e.what();
        }
    }
    partitions_.clear();
    if (!failures.empty()) throw std::runtime_error("Ensemble::heal:" + failures);
}

std::vector<std::size_t> Ensemble::partitioned() const {
    std::vector<std::size_t> out;
    for (const auto& p : partitions_) out.push_back(p.node);
    return out;
}

std::optional<std::size_t> Ensemble::node_of_session(std::int64_t session_id) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        auto& node = *nodes_[i];
        if (node.paused() || !node.running()) continue;
        try {
            for (const auto& c : served_connections(node.four_letter_word("cons", quorum_probe_timeout))) {
                if (c.session_id == session_id) return i;
            }
        } catch (const std::system_error&) {
        }
    }
    return std::nullopt;
}

}  // namespace zklock::testing
