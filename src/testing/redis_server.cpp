#include "zklock/testing/redis_server.hpp"

#include "testing/log_tail.hpp"
#include "testing/posix_io.hpp"

#include "testing/private_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <functional>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds shutdown_timeout{1000};
constexpr int max_resp_depth = 64;
constexpr long long max_resp_count = 1LL << 32;

using posix_io::remaining_ms;
using posix_io::Socket;
using posix_io::throw_errno;
using posix_io::until;
using posix_io::wait_for;
using posix_io::connect_loopback;
using posix_io::send_all;

long long parse_resp_integer(std::string_view text) {
    if (text.empty()) throw std::runtime_error("RESP: empty length");
    bool negative = false;
    if (text.front() == '-') {
        negative = true;
        text.remove_prefix(1);
        if (text.empty()) throw std::runtime_error("RESP: bad length");
    }
    long long value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') throw std::runtime_error("RESP: bad length '" + std::string(text) + "'");
        value = value * 10 + (c - '0');
        if (value > max_resp_count) throw std::runtime_error("RESP: length too large");
    }
    return negative ? -value : value;
}

// End offset of the reply that starts at pos, nullopt when incomplete.
std::optional<std::size_t> resp_reply_end(std::string_view data, std::size_t pos, int depth) {
    if (depth > max_resp_depth) throw std::runtime_error("RESP: reply nested too deeply");
    if (pos >= data.size()) return std::nullopt;
    const auto crlf = data.find("\r\n", pos + 1);
    if (crlf == std::string_view::npos) return std::nullopt;
    const std::size_t body = crlf + 2;
    const std::string_view header = data.substr(pos + 1, crlf - pos - 1);
    switch (data[pos]) {
    case '+': case '-': case ':': case '_': case ',': case '#': case '(':
        return body;
    case '$': case '=': case '!': {
        const long long n = parse_resp_integer(header);
        if (n < 0) return body;
        const auto size = static_cast<std::size_t>(n);
        if (data.size() < body + size + 2) return std::nullopt;
        if (data.substr(body + size, 2) != "\r\n") throw std::runtime_error("RESP: bulk string without CRLF");
        return body + size + 2;
    }
    case '*': case '~': case '>': case '%': case '|': {
        const long long n = parse_resp_integer(header);
        if (n < 0) return body;
        const long long count = (data[pos] == '%' || data[pos] == '|') ? 2 * n : n;
        std::size_t next = body;
        for (long long i = 0; i < count; ++i) {
            const auto end = resp_reply_end(data, next, depth + 1);
            if (!end) return std::nullopt;
            next = *end;
        }
        // An attribute map precedes the reply it annotates.
        if (data[pos] == '|') return resp_reply_end(data, next, depth + 1);
        return next;
    }
    default:
        throw std::runtime_error(std::string("RESP: unexpected type byte '") + data[pos] + "'");
    }
}

}  // namespace

std::optional<std::size_t> resp_reply_length(std::string_view data) { return resp_reply_end(data, 0, 0); }

namespace {

std::string resp_request(const std::vector<std::string>& args) {
    std::string request = "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& arg : args) request += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
    return request;
}

// Sends `commands` pipelined on one connection and returns their replies in
// order; stops early after a reply that `stop_after` accepts (a refused AUTH).
std::vector<std::string> redis_exchange(std::uint16_t port, const std::vector<std::vector<std::string>>& commands,
                                        milliseconds timeout, const std::string& what,
                                        const std::function<bool(std::size_t, const std::string&)>& stop_after) {
    const auto deadline = steady::now() + timeout;
    std::string request;
    for (const auto& args : commands) request += resp_request(args);
    Socket sock = connect_loopback(port, deadline, what);
    send_all(sock.get(), request, deadline, what);
    std::vector<std::string> replies;
    std::string buffer;
    char buf[4096];
    while (replies.size() < commands.size()) {
        if (const auto length = resp_reply_length(buffer)) {
            replies.push_back(buffer.substr(0, *length));
            buffer.erase(0, *length);
            if (stop_after(replies.size() - 1, replies.back())) break;
            continue;
        }
        const ssize_t n = ::recv(sock.get(), buf, sizeof buf, 0);
        if (n > 0) {
            buffer.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0) {
            throw_errno(ECONNRESET, what + ": connection closed before a complete reply");
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            wait_for(sock.get(), POLLIN, deadline, what);
        } else if (errno != EINTR) {
            throw_errno(errno, what);
        }
    }
    return replies;
}

// A redis.conf argument in double quotes, every byte but letters and digits as
// \xHH (sdssplitargs reads it back exactly, blanks and quotes included).
std::string config_quote(std::string_view arg) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (const char c : arg) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u)) {
            out += c;
        } else {
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        }
    }
    return out + "\"";
}

timeval to_timeval(steady::duration d) {
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::max(d, steady::duration(std::chrono::milliseconds(1))));
    return timeval{static_cast<time_t>(us.count() / 1000000), static_cast<suseconds_t>(us.count() % 1000000)};
}

// hiredis writes with write(2): a server that closes the connection must give
// EPIPE, not kill the process. SIGPIPE is blocked on this thread for the
// probe's length; one it raised meanwhile is taken back before the old mask returns.
class sigpipe_blocked {
public:
    sigpipe_blocked() {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        sigset_t pending;
        sigemptyset(&pending);
        was_pending_ = ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
        ::pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    }
    ~sigpipe_blocked() {
        sigset_t pending;
        sigemptyset(&pending);
        if (!was_pending_ && ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
            const timespec now{0, 0};
            ::sigtimedwait(&pipe_, nullptr, &now);
        }
        ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    sigpipe_blocked(const sigpipe_blocked&) = delete;
    sigpipe_blocked& operator=(const sigpipe_blocked&) = delete;

private:
    sigset_t pipe_{}, old_{};
    bool was_pending_ = false;
};

struct context_free {
    void operator()(redisContext* c) const noexcept { redisFree(c); }
};
struct reply_free {
    void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_free>;

reply_ptr run(redisContext* c, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lengths.push_back(a.size());
    }
    return reply_ptr(static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lengths.data())));
}

// Whether the server on 127.0.0.1:port answers PING with PONG within timeout,
// after AUTH as `as` when it has a password (a refused AUTH: not serving).
bool answers_ping(std::uint16_t port, const RedisCredentials& as, milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    sigpipe_blocked no_sigpipe;
    // hiredis 0.14 opens its sockets without SOCK_CLOEXEC, and a child another
    // thread starts meanwhile would inherit one: the probe connects its own
    // close-on-exec socket and hands it over, blocking (hiredis's timeouts are
    // the socket's).
    int fd = -1;
    try {
        fd = connect_loopback(port, deadline, "Redis probe").release();
    } catch (const std::system_error&) {
        return false;
    }
    const int status_flags = ::fcntl(fd, F_GETFL);
    if (status_flags < 0 || ::fcntl(fd, F_SETFL, status_flags & ~O_NONBLOCK) < 0) {
        ::close(fd);
        return false;
    }
    std::unique_ptr<redisContext, context_free> c(redisConnectFd(fd));
    if (!c) {
        ::close(fd);
        return false;
    }
    if (c->err != 0 || steady::now() >= deadline) return false;
    if (redisSetTimeout(c.get(), to_timeval(deadline - steady::now())) != REDIS_OK) return false;
    if (!as.password.empty()) {
        const auto auth =
            as.user.empty() ? run(c.get(), {"AUTH", as.password}) : run(c.get(), {"AUTH", as.user, as.password});
        if (!auth || auth->type == REDIS_REPLY_ERROR) return false;
    }
    const auto pong = run(c.get(), {"PING"});
    return pong && pong->type == REDIS_REPLY_STATUS && std::string_view(pong->str, pong->len) == "PONG";
}

}  // namespace

std::string redis_command(std::uint16_t port, const std::vector<std::string>& args, milliseconds timeout) {
    return redis_command(port, args, timeout, RedisCredentials{});
}

std::string redis_command(std::uint16_t port, const std::vector<std::string>& args, milliseconds timeout,
                          const RedisCredentials& as) {
    if (args.empty()) throw std::invalid_argument("redis_command: no command");
    const std::string what = "Redis command '" + args.front() + "' to 127.0.0.1:" + std::to_string(port);
    std::vector<std::vector<std::string>> commands;
    if (!as.password.empty()) {
        if (as.user.empty()) commands.push_back({"AUTH", as.password});
        else commands.push_back({"AUTH", as.user, as.password});
    }
    commands.push_back(args);
    const bool authenticates = commands.size() > 1;
    const auto replies = redis_exchange(port, commands, timeout, what, [&](std::size_t i, const std::string& reply) {
        return authenticates && i == 0 && reply.starts_with("-");
    });
    return replies.back();
}

// --- RedisServer -------------------------------------------------------------

RedisServer::RedisServer(RedisServerOptions options)
    : ServerProcess("Redis server", options.start_timeout), temp_dir_("zklock-redis-"), options_(std::move(options)) {
    config_path_ = temp_dir_.path() / "redis.conf";
    configure(options_.port != 0 ? options_.port : free_loopback_port(), temp_dir_.path() / "redis.log",
              temp_dir_.path());
    write_config();
    spawn();
    wait_until_serving(steady::now() + options_.start_timeout);
}

RedisServer::~RedisServer() {
    try {
        stop();
    } catch (...) {
    }
}

void RedisServer::write_config() {
    std::string config = "# zklock::testing::RedisServer: the secrets, kept off the command line\n";
    if (!options_.password.empty()) config += "requirepass " + config_quote(options_.password) + "\n";
    else if (!options_.users.empty()) config += "user default off\n";
    for (const auto& u : options_.users)
        config += "user " + config_quote(u.name) + " on " + config_quote(">" + u.password) + " ~* &* +@all\n";
    posix_io::write_private_file(config_path_, config);
}

RedisCredentials RedisServer::admin() const {
    if (!options_.password.empty()) return {"", options_.password};
    if (!options_.users.empty()) return {options_.users.front().name, options_.users.front().password};
    return {};
}

const std::filesystem::path& RedisServer::config_path() const noexcept { return config_path_; }

void RedisServer::spawn() {
    // The config file first: the options after it override what it does not hold.
    std::vector<std::string> argv{options_.redis_server, config_path_.string(), "--port", std::to_string(port()), "--bind", "127.0.0.1",
                                  "--dir", temp_dir_.path().string(), "--daemonize", "no", "--protected-mode", "yes"};
    if (options_.persistence) {
        argv.insert(argv.end(), {"--save", "3600", "1", "300", "100", "60", "10000", "--appendonly", "yes",
                                 "--appendfsync", "always"});
    } else {
        argv.insert(argv.end(), {"--save", "", "--appendonly", "no"});
    }
    argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
    ChildProcessOptions child;
    child.working_dir = temp_dir_.path();
    child.output_path = log_path();
    launch(std::move(argv), std::move(child));
}

bool RedisServer::serving(milliseconds timeout) { return answers_ping(port(), admin(), timeout); }

void RedisServer::stop_process() {
    // SHUTDOWN acts at once (SIGTERM only at the next server tick, up to
    // 100 ms later) and saves exactly when SIGTERM would (with persistence).
    if (!paused() && process()->running()) {
        try {
            redis_command(port(), {"SHUTDOWN"}, shutdown_timeout, admin());
        } catch (const std::exception&) {
            // The server closes the connection without a reply when it exits.
        }
        process()->wait_exit(shutdown_timeout);
    }
    ServerProcess::stop_process();  // SIGTERM, SIGKILL after the grace, if it did not exit
}

std::string RedisServer::host() const { return "127.0.0.1"; }

std::string RedisServer::command(const std::vector<std::string>& args, milliseconds timeout) {
    return redis_command(port(), args, timeout, admin());
}

std::string RedisServer::version() {
    const auto info = command({"INFO", "server"});
    const std::string field = "redis_version:";
    const auto at = info.find(field);
    if (at == std::string::npos) return "";
    const auto start = at + field.size();
    return info.substr(start, info.find('\r', start) - start);
}

const std::filesystem::path& RedisServer::directory() const noexcept { return temp_dir_.path(); }

}  // namespace zklock::testing
