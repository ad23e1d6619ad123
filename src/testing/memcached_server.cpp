#include "zklock/testing/memcached_server.hpp"

#include "testing/posix_io.hpp"

#include <cerrno>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// Whether `reply` is a whole answer to `line`: a retrieval's ends with
/// "END\r\n" unless its first line is an error; anything else's is one line.
bool complete(std::string_view line, std::string_view reply) {
    const auto first_end = reply.find("\r\n");
    if (first_end == std::string_view::npos) return false;
    if (!line.starts_with("get ") && !line.starts_with("gets ")) return true;
    if (reply.find("ERROR") != std::string_view::npos && reply.find("ERROR") < first_end) return true;
    return reply == "END\r\n" || reply.ends_with("\r\nEND\r\n");
}

}  // namespace

std::string memcached_command(std::uint16_t port, const std::string& line, milliseconds timeout) {
    if (line.empty() || line.ends_with("\r\n"))
        throw std::invalid_argument("memcached_command: an empty command, or one ending in CR LF");
    const std::string what = "memcached command '" + line.substr(0, line.find(' ')) + "' to 127.0.0.1:" + std::to_string(port);
    const auto deadline = steady::now() + timeout;
    auto sock = posix_io::connect_loopback(port, deadline, what);
    posix_io::send_all(sock.get(), line + "\r\n", deadline, what);
    std::string reply;
    char buf[4096];
    while (!complete(line, reply)) {
        const ssize_t n = ::recv(sock.get(), buf, sizeof buf, 0);
        if (n > 0) reply.append(buf, static_cast<std::size_t>(n));
        else if (n == 0) posix_io::throw_errno(ECONNRESET, what + ": connection closed before a complete reply");
        else if (errno == EAGAIN || errno == EWOULDBLOCK) posix_io::wait_for(sock.get(), POLLIN, deadline, what);
        else if (errno != EINTR) posix_io::throw_errno(errno, what);
    }
    return reply;
}

MemcachedServer::MemcachedServer(MemcachedServerOptions options)
    : ServerProcess("memcached server", options.start_timeout), temp_dir_("zklock-memcached-"),
      options_(std::move(options)) {
    configure(options_.port != 0 ? options_.port : free_loopback_port(), temp_dir_.path() / "memcached.log",
              temp_dir_.path());
    spawn();
    wait_until_serving(steady::now() + options_.start_timeout);
}

MemcachedServer::~MemcachedServer() {
    try {
        stop();
    } catch (...) {
    }
}

void MemcachedServer::spawn() {
    std::vector<std::string> argv{options_.memcached, "-l", "127.0.0.1", "-p", std::to_string(port()), "-U", "0"};
    if (::geteuid() == 0) argv.insert(argv.end(), {"-u", options_.run_as});
    argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
    ChildProcessOptions child;
    child.working_dir = temp_dir_.path();
    child.output_path = log_path();
    launch(std::move(argv), std::move(child));
}

bool MemcachedServer::serving(milliseconds timeout) {
    try {
        return memcached_command(port(), "version", timeout).starts_with("VERSION ");
    } catch (const std::system_error&) {
        return false;
    }
}

void MemcachedServer::stop_process() { process()->kill9(); }

std::string MemcachedServer::command(const std::string& line, milliseconds timeout) {
    return memcached_command(port(), line, timeout);
}

std::string MemcachedServer::version() {
    const auto reply = command("version");
    if (!reply.starts_with("VERSION ")) return "";
    return reply.substr(8, reply.find('\r') - 8);
}

}  // namespace zklock::testing
