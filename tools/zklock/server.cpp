// zklock server: a local ZooKeeper server (or 3-node ensemble) for trying zklock out.
#include "commands.hpp"

#include <zklock/testing/zookeeper_server.hpp>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::cli {
namespace {

struct server_options {
    int port = 0;
    std::string dir;
    bool ensemble = false;
    int tick_ms = 200;
};

// Why the server could not listen on 127.0.0.1:`port`, or empty when it can:
// a bind of our own, as the server's (SO_REUSEADDR: a port left in TIME_WAIT
// is free). A port taken by another ZooKeeper server would answer the
// fixture's ruok in its stead, so the start would seem to succeed.
std::string port_problem(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::string("socket: ") + std::strerror(errno);
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    const int err = errno;
    ::close(fd);
    if (rc == 0) return {};
    const std::string where = "port " + std::to_string(port) + " of 127.0.0.1";
    if (err == EADDRINUSE)
        return where + " is taken: another program listens there (a ZooKeeper server already running?); stop it, "
                       "or give another --port (none: a free one)";
    return where + ": " + std::strerror(err);
}

int server_command(const server_options& o) {
    // Before anything starts: a taken port would otherwise show only as the
    // new server exiting on its own, after the connect string was printed.
    if (o.port != 0)
        if (const auto problem = port_problem(o.port); !problem.empty()) {
            std::cerr << "zklock: could not start ZooKeeper: " << problem << "\n";
            return exit_unavailable;
        }

    // Blocked before the fixture starts any thread or process, then taken with
    // sigtimedwait: a signal during the (seconds long) start stops the server
    // right after it is up. The fixture's children start with an empty mask.
    sigset_t stop_signals;
    ::sigemptyset(&stop_signals);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction current {};
        // Ignored on entry (nohup): keep ignoring it; sigwait would take it even so.
        if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        ::sigaddset(&stop_signals, sig);
    }
    ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    std::unique_ptr<testing::ZooKeeperServer> server;
    std::unique_ptr<testing::Ensemble> ensemble;
    std::string connect;
    std::string where;
    try {
        if (o.ensemble) {
            testing::EnsembleOptions eo;
            eo.tick_time_ms = o.tick_ms;
            ensemble = std::make_unique<testing::Ensemble>(eo);
            connect = ensemble->connect_string();
            where = ensemble->directory().string();
        } else {
            testing::ZooKeeperServerOptions so;
            so.port = static_cast<std::uint16_t>(o.port);
            so.tick_time_ms = o.tick_ms;
            if (!o.dir.empty()) so.data_dir = std::filesystem::absolute(o.dir).string();
            server = std::make_unique<testing::ZooKeeperServer>(so);
            connect = server->connect_string();
            where = server->data_dir().string();
        }
    } catch (const std::exception& e) {
        std::cerr << "zklock: could not start ZooKeeper: " << e.what() << "\n";
        return exit_unavailable;
    }

    std::cout << connect << std::endl;
    std::cerr << "zklock: " << (o.ensemble ? "3-node ensemble" : "standalone server") << " at " << connect
              << " (tickTime " << o.tick_ms << " ms: session timeouts " << 2 * o.tick_ms << "-" << 20 * o.tick_ms
              << " ms), data in " << where << (o.dir.empty() ? " (removed on exit)" : "") << "\n"
              << "zklock: in another shell: export ZKLOCK_CONNECT=" << connect << "\n"
              << "zklock: Ctrl-C or SIGTERM stops it" << std::endl;

    int exit_code = 0;
    const timespec check_every{0, 500'000'000};
    while (true) {
        const int sig = ::sigtimedwait(&stop_signals, nullptr, &check_every);
        if (sig > 0) {
            std::cerr << "zklock: " << ::strsignal(sig) << ": stopping" << std::endl;
            break;
        }
        if (sig < 0 && errno != EAGAIN && errno != EINTR) {
            std::cerr << "zklock: sigtimedwait: " << std::strerror(errno) << "\n";
            exit_code = 1;
            break;
        }
        bool alive = true;
        if (server) alive = server->running();
        for (std::size_t i = 0; ensemble && i < ensemble->size(); ++i) alive = alive && ensemble->node(i).running();
        if (!alive) {
            std::cerr << "zklock: a ZooKeeper server exited on its own; stopping\n";
            exit_code = 1;
            break;
        }
    }
    server.reset();
    ensemble.reset();
    return exit_code;
}

} // namespace

void add_server(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<server_options>();
    auto* cmd = app.add_subcommand("server", "Run a local ZooKeeper server (or 3-node ensemble) until Ctrl-C/SIGTERM");
    cmd->footer(
        "Prints the connect string as the first line of stdout. tickTime defaults to 200 ms (a production\n"
        "server uses 2000): sessions then get 0.4-4 s timeouts, so lock loss and expiry show quickly.\n"
        "Needs Java and the ZooKeeper server jar (Debian package `zookeeper`).\n"
        "Exit status: 0 stopped by SIGINT, SIGTERM or SIGHUP; 69 could not start (--port taken by another program,\n"
        "no Java or no server jar); 1 a server exited on its own; 64 bad arguments.");
    auto* port = cmd->add_option("--port", o->port, "Client port on 127.0.0.1 (default: a free one)")
                     ->check(CLI::Range(0, 65535));
    auto* dir = cmd->add_option("--dir", o->dir, "Data directory, kept on exit (default: a temp dir, removed)");
    cmd->add_flag("--ensemble", o->ensemble, "Run a 3-node ensemble on free ports instead")->excludes(port)->excludes(dir);
    add_duration_option(*cmd, "--tick", o->tick_ms, "tickTime; session timeouts are clamped to [2, 20] x tick",
                        {std::chrono::milliseconds(1), std::chrono::milliseconds(60000)});
    cmd->callback([o, &exit_code] { exit_code = server_command(*o); });
}

} // namespace zklock::cli
