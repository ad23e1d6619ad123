#include "ensemble/servers.hpp"

#include "reachability.hpp"
#include "terminal_text.hpp"

#include <zklock/testing/four_letter_words.hpp>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::cli {
namespace {

using srvr_clock = std::chrono::steady_clock;

// One socket, closed when it goes.
struct owned_fd {
    int fd = -1;
    ~owned_fd() {
        if (fd >= 0) ::close(fd);
    }
};

// Waits for `events` on `fd` until `deadline`; false when it passes.
bool wait_for_fd(int fd, short events, srvr_clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - srvr_clock::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int rc = ::poll(&p, 1, static_cast<int>(left));
        if (rc > 0) return true;
        if (rc < 0 && errno != EINTR) return false;
    }
}

// A four-letter word over one connected socket: the answer, or why there is none (in `why`).
std::optional<std::string> word_exchange(int fd, std::string_view word, srvr_clock::time_point deadline,
                                         std::string& why) {
    const auto fail = [&why](std::string reason) {
        why = std::move(reason);
        return std::optional<std::string>();
    };
    for (std::size_t sent = 0; sent < word.size();) {
        const ssize_t n = ::send(fd, word.data() + sent, word.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (!wait_for_fd(fd, POLLOUT, deadline)) return fail("no answer in time");
        } else {
            return fail(std::strerror(errno));
        }
    }
    std::string answer;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            answer.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0) {
            return answer;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            if (!wait_for_fd(fd, POLLIN, deadline)) return fail("no answer in time");
        } else {
            return fail(std::strerror(errno));
        }
    }
}

// The first line of a server's answer that has no mode, shortened for a note.
std::string first_answer_line(const std::string& answer) {
    const auto line = answer.substr(0, answer.find_first_of("\r\n"));
    return line.empty() ? "an empty answer" : "'" + shortened(line) + "'";
}

} // namespace

std::optional<std::string> ask_word(const std::string& server, std::string_view word, std::chrono::milliseconds timeout,
                                    std::string& why) {
    const auto deadline = srvr_clock::now() + timeout;
    const auto [host, port] = host_and_port(server);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
        why = std::string("cannot resolve: ") + ::gai_strerror(rc);
        return std::nullopt;
    }
    const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, &::freeaddrinfo);
    why = "no address";
    for (auto* ai = found; ai; ai = ai->ai_next) {
        owned_fd sock{::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol)};
        if (sock.fd < 0) {
            why = std::strerror(errno);
            continue;
        }
        if (::connect(sock.fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            if (errno != EINPROGRESS) {
                why = std::strerror(errno);
                continue;
            }
            if (!wait_for_fd(sock.fd, POLLOUT, deadline)) {
                why = "no answer in time";
                continue;
            }
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(sock.fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) {
                why = std::strerror(err);
                continue;
            }
        }
        if (auto text = word_exchange(sock.fd, word, deadline, why)) return text;
    }
    return std::nullopt;
}

server_answer ask_srvr(const std::string& server, std::chrono::milliseconds timeout, std::string* answer) {
    server_answer out{server, std::nullopt, {}};
    const auto text = ask_word(server, "srvr", timeout, out.why);
    if (!text) return out;
    if (answer) *answer = *text;
    out.mode = testing::server_mode(*text);
    if (!out.mode) out.why = first_answer_line(*text);
    return out;
}

bench_servers::bench_servers(const bench_servers_options& o) {
    if (o.connect_given) ask(o);
    else if (o.ensemble == 1) start_standalone(o);
    else start_ensemble(o);
}

bench_servers::~bench_servers() = default;

void bench_servers::start_standalone(const bench_servers_options& o) {
    testing::ZooKeeperServerOptions so;
    so.tick_time_ms = 200;
    so.max_session_timeout_ms = 20000;
    so.extra_config = o.config;
    standalone_ = std::make_unique<testing::ZooKeeperServer>(so);
    nodes_ = {{"standalone", standalone_->connect_string(), 1}};
    version_ = zookeeper_version(standalone_->four_letter_word("srvr"));
    std::cerr << "zklock bench: started a throwaway ZooKeeper at " << standalone_->connect_string()
              << " (pass -c to use yours)";
    for (const auto& line : o.config) std::cerr << " " << line;
    std::cerr << "\n";
}

void bench_servers::start_ensemble(const bench_servers_options& o) {
    testing::EnsembleOptions eo;
    eo.size = static_cast<std::size_t>(o.ensemble);
    eo.tick_time_ms = 200;
    eo.max_session_timeout_ms = 20000;
    eo.extra_config = o.config;
    ensemble_ = std::make_unique<testing::Ensemble>(eo);
    const auto leader = ensemble_->leader_index();
    if (!leader) throw std::runtime_error("the throwaway ZooKeeper ensemble at " + ensemble_->connect_string() +
                                          " has no leader");
    const std::size_t follower = *leader == 0 ? 1 : 0;
    nodes_ = {{"follower", ensemble_->node(follower).connect_string(), o.ensemble},
              {"leader", ensemble_->node(*leader).connect_string(), o.ensemble}};
    version_ = zookeeper_version(ensemble_->node(*leader).four_letter_word("srvr"));
    std::cerr << "zklock bench: started a throwaway " << o.ensemble << "-node ZooKeeper ensemble at "
              << ensemble_->connect_string();
    for (const auto& line : o.config) std::cerr << " " << line;
    std::cerr << "; the clients run on the follower " << nodes_[0].connect << ", then on the leader "
              << nodes_[1].connect << "\n";
}

void bench_servers::ask(const bench_servers_options& o) {
    std::vector<server_answer> answers;
    for (const auto& server : servers_of(o.connect)) {
        std::string text;
        answers.push_back(ask_srvr(server, o.srvr_timeout, &text));
        if (version_.empty() && answers.back().mode) version_ = zookeeper_version(text);
    }
    auto plan = plan_serving_nodes(o.connect, answers);
    for (const auto& note : plan.notes) std::cerr << "zklock bench: " << note << "\n";
    nodes_ = std::move(plan.nodes);
    if (nodes_.size() > 1)
        std::cerr << "zklock bench: the clients run on the " << nodes_[0].role << " " << nodes_[0].connect
                  << ", then on the " << nodes_[1].role << " " << nodes_[1].connect << "\n";
}

} // namespace zklock::cli
