#include "zklock/testing/four_letter_words.hpp"

#include "testing/posix_io.hpp"

#include <cerrno>
#include <charconv>

#include <poll.h>
#include <sys/socket.h>

namespace zklock::testing {

std::string four_letter_word(std::uint16_t port, std::string_view command, std::chrono::milliseconds timeout) {
    using namespace posix_io;
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

namespace {

// " /ADDRESS:PORT[OPS](queued=...,sid=0xHEX,...)": the address may be IPv6,
// so the port is what follows the last ':' before the '[' of "[OPS](".
std::optional<ServedConnection> parse_connection_line(std::string_view line) {
    const auto slash = line.find('/');
    if (slash == std::string_view::npos || line.find_first_not_of(' ') != slash) return std::nullopt;
    const auto details = line.find("](");
    if (details == std::string_view::npos) return std::nullopt;
    const auto ops = line.rfind('[', details);
    if (ops == std::string_view::npos || ops <= slash) return std::nullopt;
    const auto address = line.substr(slash + 1, ops - slash - 1);
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const auto port_text = address.substr(colon + 1);
    unsigned port = 0;
    const auto [pend, perr] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (perr != std::errc() || pend != port_text.data() + port_text.size() || port == 0 || port > 65535) {
        return std::nullopt;
    }
    ServedConnection out;
    out.client_port = static_cast<std::uint16_t>(port);
    const auto inside = line.substr(details + 2);
    constexpr std::string_view sid_key = "sid=0x";
    for (std::size_t at = inside.find(sid_key); at != std::string_view::npos; at = inside.find(sid_key, at + 1)) {
        if (at != 0 && inside[at - 1] != ',') continue;  // e.g. not part of another key
        const auto hex = inside.substr(at + sid_key.size());
        std::uint64_t sid = 0;
        const auto [end, err] = std::from_chars(hex.data(), hex.data() + hex.size(), sid, 16);
        if (err == std::errc() && end != hex.data()) out.session_id = static_cast<std::int64_t>(sid);
        break;
    }
    return out;
}

}  // namespace

std::vector<ServedConnection> served_connections(std::string_view cons_answer) {
    std::vector<ServedConnection> out;
    while (!cons_answer.empty()) {
        const auto nl = cons_answer.find('\n');
        auto line = cons_answer.substr(0, nl);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (auto c = parse_connection_line(line)) out.push_back(*c);
        cons_answer.remove_prefix(nl == std::string_view::npos ? cons_answer.size() : nl + 1);
    }
    return out;
}

}  // namespace zklock::testing
