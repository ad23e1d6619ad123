#include "connect_string.hpp"

#include "terminal_text.hpp"

#include <algorithm>

namespace zklock::cli {
namespace {

bool host_character(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_' || c == ':';
}

std::string quoted(std::string_view text) { return "'" + shortened(text) + "'"; }

// One server, host:port (the C client splits at the last colon, so that an
// IPv6 address keeps its own).
std::string server_problem(std::string_view server) {
    if (server.empty()) return "an empty server (two commas, or a comma at an end)";
    if (server.find('[') != std::string_view::npos || server.find(']') != std::string_view::npos)
        return quoted(server) + ": an IPv6 address goes without brackets (::1:2181)";
    const auto colon = server.rfind(':');
    if (colon == std::string_view::npos) return quoted(server) + " has no port (host:port)";
    const auto host = server.substr(0, colon);
    const auto port = server.substr(colon + 1);
    if (host.empty()) return quoted(server) + " has no host";
    if (!std::all_of(host.begin(), host.end(), host_character))
        return quoted(server) + ": a host is letters, digits, '.', '-' and '_' (or an IPv6 address)";
    long value = 0;
    bool number = !port.empty() && port.size() <= 5;  // and so value stays far from overflow
    for (std::size_t i = 0; number && i < port.size(); ++i) {
        if (port[i] < '0' || port[i] > '9') number = false;
        else value = value * 10 + (port[i] - '0');
    }
    if (!number || value < 1 || value > 65535) return quoted(server) + ": the port is a number from 1 to 65535";
    return {};
}

// The chroot as the C client's isValidPath() takes it ("/" alone means none).
std::string chroot_problem(std::string_view chroot) {
    if (chroot == "/") return {};
    const auto refuse = [&](const char* why) { return "the chroot " + quoted(chroot) + " " + why; };
    if (chroot.back() == '/') return refuse("ends with '/'");
    for (std::size_t start = 1; start <= chroot.size();) {
        auto end = chroot.find('/', start);
        if (end == std::string_view::npos) end = chroot.size();
        const auto segment = chroot.substr(start, end - start);
        if (segment.empty()) return refuse("holds an empty segment ('//')");
        if (segment == "." || segment == "..") return refuse("holds a '.' or '..' segment");
        start = end + 1;
    }
    for (char c : chroot)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return refuse("holds a control character");
    return {};
}

} // namespace

std::string connect_string_problem(std::string_view connect) {
    if (connect.empty()) return "it is empty";
    const auto slash = connect.find('/');
    auto servers = connect.substr(0, slash);
    if (servers.empty()) return "it names no server before the chroot (host:port/chroot)";
    for (;;) {
        const auto comma = servers.find(',');
        if (auto why = server_problem(servers.substr(0, comma)); !why.empty()) return why;
        if (comma == std::string_view::npos) break;
        servers.remove_prefix(comma + 1);
    }
    if (slash != std::string_view::npos) return chroot_problem(connect.substr(slash));
    return {};
}

bool looks_like_a_command(std::string_view value) {
    if (connect_string_problem(value).empty()) return false;
    return value.find_first_of(" \t\n;|&$<>()`'\"*?!{}\\") != std::string_view::npos;
}

std::string flock_command_hint(std::string_view usage, std::string_view path, std::string_view value) {
    // The command as the shell reads it back, or CMD when it is too long to quote.
    const auto word = columns(escape_control(value)) <= quote_width ? shell_word(value) : std::string("'CMD'");
    const auto lock_path = path.empty() || columns(escape_control(path)) > quote_width ? std::string("LOCK_PATH")
                                                                                       : shell_word(path);
    return "-c is the ZooKeeper connect string (host:port,...), not a command: for flock's -c " + word + " write " +
           std::string(usage) + " " + lock_path + " -- sh -c " + word;
}

} // namespace zklock::cli
