#include "zklock/testing/zookeeper_server.hpp"

#include "support/cloexec_file.hpp"
#include "testing/posix_io.hpp"
#include "testing/zookeeper_config.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::testing {

namespace detail {

std::string common_zoo_config(const std::filesystem::path& data_dir, std::uint16_t port, int tick_time_ms,
                              int min_session_timeout_ms, int max_session_timeout_ms) {
    std::ostringstream cfg;
    cfg << "tickTime=" << tick_time_ms << '\n'
        << "dataDir=" << data_dir.string() << '\n'
        << "clientPort=" << port << '\n'
        << "clientPortAddress=127.0.0.1\n"
        << "admin.enableServer=false\n"
        << "4lw.commands.whitelist=ruok,srvr,mntr,stat,cons\n"
        << "maxClientCnxns=0\n";
    if (min_session_timeout_ms > 0) cfg << "minSessionTimeout=" << min_session_timeout_ms << '\n';
    if (max_session_timeout_ms > 0) cfg << "maxSessionTimeout=" << max_session_timeout_ms << '\n';
    return cfg.str();
}

std::string config_lines(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& line : lines) out += line + '\n';
    return out;
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
    write_file_cloexec(path, text);
}

std::string join_classpath(const std::string& classpath, const std::string& logging) {
    if (logging.empty()) return classpath;
    if (classpath.empty()) return logging;
    return classpath + ":" + logging;
}

// A loopback connect is answered at once: accepted or refused.
bool accepts_connections(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in loopback{};
    loopback.sin_family = AF_INET;
    loopback.sin_port = htons(port);
    loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool accepted = ::connect(fd, reinterpret_cast<const sockaddr*>(&loopback), sizeof loopback) == 0;
    ::close(fd);
    return accepted;
}

std::string tls_zoo_config(std::uint16_t secure_port, const TestCertificates& c) {
    std::ostringstream cfg;
    cfg << "secureClientPort=" << secure_port << '\n'
        << "secureClientPortAddress=127.0.0.1\n"
        << "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n"
        << "ssl.keyStore.location=" << c.server_keystore.string() << '\n'
        << "ssl.keyStore.password=" << c.store_password << '\n'
        << "ssl.keyStore.type=PKCS12\n"
        << "ssl.trustStore.location=" << c.server_truststore.string() << '\n'
        << "ssl.trustStore.password=" << c.store_password << '\n'
        << "ssl.trustStore.type=PKCS12\n";
    return cfg.str();
}

}  // namespace detail

ZooKeeperServer::ZooKeeperServer(ZooKeeperServerOptions options)
    : ServerProcess("ZooKeeper server", options.start_timeout) {
    temp_dir_.emplace("zklock-zk-");
    directory_ = temp_dir_->path();
    data_dir_ = options.data_dir.empty() ? directory_ / "data" : std::filesystem::absolute(options.data_dir);
    std::filesystem::create_directories(data_dir_);
    config_path_ = directory_ / "zoo.cfg";
    // Debian's zookeeper.jar names no Netty codec or resolver in its manifest.
    const std::string netty = options.tls ? detail::netty_classpath : "";
    launch_ = Launch{options.java,
                     detail::join_classpath(detail::join_classpath(options.classpath, netty), options.logging_classpath),
                     std::move(options.jvm_flags), options.quiet, options.start_timeout};
    if (options.tls) certificates_ = make_test_certificates(directory_ / "tls", options.tls_certificates);
    // A port chosen here was free when it was chosen; another process (a test
    // running beside this one) may bind it before the server does. Then the
    // server exits at once, and a new port is chosen, twice at most.
    for (int attempt = 1;; ++attempt) {
        const std::uint16_t port = options.port != 0 ? options.port : free_loopback_port();
        secure_port_ = 0;
        if (certificates_)
            for (secure_port_ = free_loopback_port(); secure_port_ == port;) secure_port_ = free_loopback_port();
        const auto log = directory_ / "zookeeper.log";
        std::filesystem::remove(log);
        configure(port, log, config_path_);
        detail::write_text_file(config_path_,
                                detail::common_zoo_config(data_dir_, port, options.tick_time_ms,
                                                          options.min_session_timeout_ms,
                                                          options.max_session_timeout_ms) +
                                    (certificates_ ? detail::tls_zoo_config(secure_port_, *certificates_) : std::string()) +
                                    detail::config_lines(options.extra_config));
        try {
            spawn();
            wait_until_serving(std::chrono::steady_clock::now() + launch_.start_timeout);
            return;
        } catch (const std::runtime_error& e) {
            const bool port_taken = std::string(e.what()).find("java.net.BindException: Address already in use") !=
                                    std::string::npos;
            if (options.port != 0 || !port_taken || attempt == 3) throw;
        }
    }
}

ZooKeeperServer::ZooKeeperServer(std::filesystem::path directory, std::filesystem::path data_dir, std::uint16_t port,
                                 std::uint16_t quorum_port, std::uint16_t election_port, std::string config,
                                 Launch launch)
    : ServerProcess("ZooKeeper server", launch.start_timeout), directory_(std::move(directory)),
      data_dir_(std::move(data_dir)), config_path_(directory_ / "zoo.cfg"), quorum_port_(quorum_port),
      election_port_(election_port), launch_(std::move(launch)) {
    configure(port, directory_ / "zookeeper.log", config_path_);
    std::filesystem::create_directories(data_dir_);
    detail::write_text_file(config_path_, config);
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
    if (launch_.quiet) options.output_path = log_path();
    launch(std::move(argv), std::move(options));
}

bool ZooKeeperServer::serving(std::chrono::milliseconds timeout) {
    try {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        if (testing::four_letter_word(port(), "ruok", timeout) != "imok") return false;
        // The secure port opens after the plain one: a TLS client connecting
        // in between would be refused.
        if (secure_port_ != 0 && !detail::accepts_connections(secure_port_)) return false;
        return server_mode(testing::four_letter_word(port(), "srvr", posix_io::until(deadline, timeout))).has_value();
    } catch (const std::system_error&) {
        return false;
    }
}

void ZooKeeperServer::restart() { restart(true); }

void ZooKeeperServer::restart(bool wait) {
    stop();
    spawn();
    if (wait) wait_until_serving(std::chrono::steady_clock::now() + launch_.start_timeout);
}

std::uint16_t ZooKeeperServer::secure_port() const noexcept { return secure_port_; }

std::string ZooKeeperServer::secure_connect_string() const {
    return secure_port_ == 0 ? std::string() : "127.0.0.1:" + std::to_string(secure_port_);
}

const TestCertificates& ZooKeeperServer::certificates() const {
    if (!certificates_) throw std::logic_error("ZooKeeperServer::certificates(): the server has no TLS");
    return *certificates_;
}

std::uint16_t ZooKeeperServer::quorum_port() const noexcept { return quorum_port_; }

std::uint16_t ZooKeeperServer::election_port() const noexcept { return election_port_; }

std::string ZooKeeperServer::four_letter_word(const std::string& cmd, std::chrono::milliseconds timeout) {
    return testing::four_letter_word(port(), cmd, timeout);
}

const std::filesystem::path& ZooKeeperServer::directory() const noexcept { return directory_; }

const std::filesystem::path& ZooKeeperServer::data_dir() const noexcept { return data_dir_; }

const std::filesystem::path& ZooKeeperServer::config_path() const noexcept { return config_path_; }

}  // namespace zklock::testing
