#include "zklock/testing/zookeeper_server.hpp"

#include "log_tail.hpp"
#include "posix_io.hpp"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds poll_interval{25};
constexpr milliseconds stop_grace{5000};
constexpr milliseconds probe_timeout{1000};
constexpr const char* four_letter_whitelist = "ruok,srvr,mntr,stat,cons";

using posix_io::remaining_ms;
using posix_io::Socket;
using posix_io::throw_errno;
using posix_io::until;
using posix_io::wait_for;
using posix_io::connect_loopback;
using posix_io::send_all;

std::string common_config(const std::filesystem::path& data_dir, std::uint16_t port, int tick_time_ms,
                          int min_session_timeout_ms, int max_session_timeout_ms) {
    std::ostringstream cfg;
    cfg << "tickTime=" << tick_time_ms << '\n'
        << "dataDir=" << data_dir.string() << '\n'
        << "clientPort=" << port << '\n'
        << "clientPortAddress=127.0.0.1\n"
        << "admin.enableServer=false\n"
        << "4lw.commands.whitelist=" << four_letter_whitelist << '\n'
        << "maxClientCnxns=0\n";
    if (min_session_timeout_ms > 0) cfg << "minSessionTimeout=" << min_session_timeout_ms << '\n';
    if (max_session_timeout_ms > 0) cfg << "maxSessionTimeout=" << max_session_timeout_ms << '\n';
    return cfg.str();
}

std::string extra_lines(const std::vector<std::string>& extra) {
    std::string out;
    for (const auto& line : extra) out += line + '\n';
    return out;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw_errno(errno != 0 ? errno : EIO, "cannot write " + path.string());
}

std::string join_classpath(const std::string& classpath, const std::string& logging) {
    if (logging.empty()) return classpath;
    if (classpath.empty()) return logging;
    return classpath + ":" + logging;
}

}  // namespace

std::string four_letter_word(std::uint16_t port, std::string_view command, milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    const std::string what = "four-letter word '" + std::string(command) + "' to 127.0.0.1:" + std::to_string(port);
    Socket sock = connect_loopback(port, deadline, what);
    send_all(sock.get(), command, deadline, what);
    std::string answer;
    char buf[4096];
    while (true) {
        const ssize_t n = ::recv(sock.get(), buf, sizeof buf, 0);
        if (n > 0) {
            answer.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0) {
            return answer;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            wait_for(sock.get(), POLLIN, deadline, what);
        } else if (errno != EINTR) {
            throw_errno(errno, what);
        }
    }
}

std::optional<std::string> server_mode(std::string_view srvr_answer) {
    constexpr std::string_view key = "Mode: ";
    std::size_t pos = 0;
    while ((pos = srvr_answer.find(key, pos)) != std::string_view::npos) {
        if (pos == 0 || srvr_answer[pos - 1] == '\n') {
            auto value = srvr_answer.substr(pos + key.size());
            value = value.substr(0, value.find_first_of("\r\n"));
            if (!value.empty()) return std::string(value);
        }
        pos += key.size();
    }
    return std::nullopt;
}

// --- ZooKeeperServer ---------------------------------------------------------

ZooKeeperServer::ZooKeeperServer(ZooKeeperServerOptions options) {
    temp_dir_.emplace("zklock-zk-");
    directory_ = temp_dir_->path();
    data_dir_ = options.data_dir.empty() ? directory_ / "data" : std::filesystem::absolute(options.data_dir);
    std::filesystem::create_directories(data_dir_);
    port_ = options.port != 0 ? options.port : free_loopback_port();
    config_path_ = directory_ / "zoo.cfg";
    log_path_ = directory_ / "zookeeper.log";
    write_file(config_path_, common_config(data_dir_, port_, options.tick_time_ms, options.min_session_timeout_ms,
                                          options.max_session_timeout_ms) +
                                 extra_lines(options.extra_config));
    launch_ = Launch{options.java, join_classpath(options.classpath, options.logging_classpath),
                     std::move(options.jvm_flags), options.quiet, options.start_timeout};
    spawn();
    wait_until_serving(steady::now() + launch_.start_timeout);
}

ZooKeeperServer::ZooKeeperServer(std::filesystem::path directory, std::filesystem::path data_dir,
                                 std::uint16_t port, std::string config, Launch launch)
    : directory_(std::move(directory)), data_dir_(std::move(data_dir)), config_path_(directory_ / "zoo.cfg"),
      log_path_(directory_ / "zookeeper.log"), port_(port), launch_(std::move(launch)) {
    std::filesystem::create_directories(data_dir_);
    write_file(config_path_, config);
}

ZooKeeperServer::~ZooKeeperServer() {
    try {
        stop();
    } catch (...) {
    }
}

void ZooKeeperServer::spawn() {
    std::vector<std::string> argv{launch_.java, "-Dzookeeper.log.dir=" + directory_.string(),
                                  std::string("-Dzookeeper.root.logger=") +
                                      (launch_.quiet ? "INFO,CONSOLE" : "INFO,CONSOLE,ROLLINGFILE")};
    argv.insert(argv.end(), launch_.jvm_flags.begin(), launch_.jvm_flags.end());
    argv.insert(argv.end(), {"-cp", launch_.classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                             config_path_.string()});
    ChildProcessOptions options;
    options.working_dir = directory_;
    if (launch_.quiet) options.output_path = log_path_;
    process_.emplace(std::move(argv), std::move(options));
    paused_ = false;
}

bool ZooKeeperServer::serving(milliseconds timeout) {
    try {
        const auto deadline = steady::now() + timeout;
        if (testing::four_letter_word(port_, "ruok", timeout) != "imok") return false;
        return server_mode(testing::four_letter_word(port_, "srvr", until(deadline, timeout))).has_value();
    } catch (const std::system_error&) {
        return false;
    }
}

void ZooKeeperServer::wait_until_serving(steady::time_point deadline) {
    while (true) {
        if (!process_ || !process_->running()) {
            fail_start("the server process " +
                       (process_ && process_->exit_status() ? describe_wait_status(*process_->exit_status())
                                                            : std::string("is not running")));
        }
        if (serving(until(deadline, probe_timeout))) return;
        if (steady::now() >= deadline) {
            fail_start("the server did not serve within " +
                       std::to_string(launch_.start_timeout.count()) + " ms");
        }
        std::this_thread::sleep_for(until(deadline, poll_interval));
    }
}

void ZooKeeperServer::fail_start(const std::string& why) {
    std::string message = "ZooKeeper server on 127.0.0.1:" + std::to_string(port_) + " (" +
                          config_path_.string() + ") failed to start: " + why + "\n--- last lines of " +
                          log_path_.string() + " ---\n" + log_tail(20);
    if (process_) {
        process_->kill9();
        process_.reset();
    }
    throw std::runtime_error(message);
}

std::uint16_t ZooKeeperServer::port() const noexcept { return port_; }

std::string ZooKeeperServer::connect_string() const { return "127.0.0.1:" + std::to_string(port_); }

void ZooKeeperServer::stop() {
    if (process_) {
        process_->stop(stop_grace);
        process_.reset();
    }
    paused_ = false;
}

void ZooKeeperServer::kill9() {
    if (process_) {
        process_->kill9();
        process_.reset();
    }
    paused_ = false;
}

void ZooKeeperServer::restart(bool wait) {
    stop();
    spawn();
    if (wait) wait_until_serving(steady::now() + launch_.start_timeout);
}

void ZooKeeperServer::pause() {
    if (process_ && !paused_ && process_->pause()) paused_ = true;
}

void ZooKeeperServer::resume() {
    if (process_ && paused_) process_->resume();
    paused_ = false;
}

bool ZooKeeperServer::running() { return process_ && process_->running(); }

bool ZooKeeperServer::paused() const noexcept { return paused_; }

std::string ZooKeeperServer::four_letter_word(const std::string& cmd, milliseconds timeout) {
    return testing::four_letter_word(port_, cmd, timeout);
}

const std::filesystem::path& ZooKeeperServer::log_path() const noexcept { return log_path_; }

const std::filesystem::path& ZooKeeperServer::directory() const noexcept { return directory_; }

const std::filesystem::path& ZooKeeperServer::data_dir() const noexcept { return data_dir_; }

const std::filesystem::path& ZooKeeperServer::config_path() const noexcept { return config_path_; }

pid_t ZooKeeperServer::pid() const noexcept {
    return process_ && !process_->exit_status() ? process_->pid() : -1;
}

std::string ZooKeeperServer::log_tail(std::size_t lines) const { return detail::last_lines(log_path_, lines); }

// --- Ensemble ----------------------------------------------------------------

Ensemble::Ensemble(EnsembleOptions options) : root_("zklock-ensemble-") {
    if (options.size == 0) throw std::invalid_argument("Ensemble: size must be at least 1");
    const std::size_t n = options.size;
    const auto ports = free_loopback_ports(3 * n);
    std::string servers;
    for (std::size_t i = 0; i < n; ++i) {
        servers += "server." + std::to_string(i + 1) + "=127.0.0.1:" + std::to_string(ports[3 * i + 1]) + ":" +
                   std::to_string(ports[3 * i + 2]) + '\n';
    }
    const ZooKeeperServer::Launch launch{options.java, join_classpath(options.classpath, options.logging_classpath),
                        options.jvm_flags, options.quiet, options.start_timeout};
    for (std::size_t i = 0; i < n; ++i) {
        const auto dir = root_.path() / ("node" + std::to_string(i + 1));
        const auto data = dir / "data";
        std::filesystem::create_directories(data);
        write_file(data / "myid", std::to_string(i + 1) + "\n");
        std::string config = common_config(data, ports[3 * i], options.tick_time_ms, options.min_session_timeout_ms,
                                           options.max_session_timeout_ms) +
                             "initLimit=" + std::to_string(options.init_limit) + "\n" +
                             "syncLimit=" + std::to_string(options.sync_limit) + "\n" + servers +
                             extra_lines(options.extra_config);
        nodes_.push_back(std::unique_ptr<ZooKeeperServer>(
            new ZooKeeperServer(dir, data, ports[3 * i], std::move(config), launch)));
    }
    for (auto& node : nodes_) node->spawn();

    const auto deadline = steady::now() + options.start_timeout;
    std::string why;
    while (true) {
        const auto state = check_quorum(until(deadline, probe_timeout), &why);
        if (state == quorum_state::ready) return;
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
        std::this_thread::sleep_for(until(deadline, poll_interval));
    }
}

Ensemble::~Ensemble() {
    for (auto& node : nodes_) {
        if (node->process_) {
            node->process_->signal(SIGTERM);
            node->process_->resume();
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

ZooKeeperServer& Ensemble::node(std::size_t i) {
    if (i >= nodes_.size()) {
        throw std::out_of_range("Ensemble::node: index " + std::to_string(i) + " >= size " +
                                std::to_string(nodes_.size()));
    }
    return *nodes_[i];
}

const std::filesystem::path& Ensemble::directory() const noexcept { return root_.path(); }

std::optional<std::size_t> Ensemble::leader_index() {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        auto& node = *nodes_[i];
        if (node.paused() || !node.running()) continue;
        try {
            const auto mode = server_mode(node.four_letter_word("srvr", probe_timeout));
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
    for (auto& node : nodes_) {
        if (!node->process_) continue;
        if (!node->process_->running()) {
            if (exited == nullptr) continue;
            *exited = "node " + node->connect_string() + ": the server process " +
                      describe_wait_status(node->process_->exit_status().value_or(-1));
            return quorum_state::node_exited;
        }
        if (node->paused()) continue;
        std::optional<std::string> mode;
        try {
            if (node->four_letter_word("ruok", per_node_timeout) == "imok") {
                mode = server_mode(node->four_letter_word("srvr", per_node_timeout));
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
        if (check_quorum(until(deadline, probe_timeout), nullptr) == quorum_state::ready) return true;
        if (steady::now() >= deadline) return false;
        std::this_thread::sleep_for(until(deadline, poll_interval));
    }
}

}  // namespace zklock::testing
