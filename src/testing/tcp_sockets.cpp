#include "testing/tcp_sockets.hpp"

#include "support/cloexec_file.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace zklock::testing::detail {
namespace {

std::vector<std::string_view> fields(std::string_view line) {
    std::vector<std::string_view> out;
    while (true) {
        const auto start = line.find_first_not_of(' ');
        if (start == std::string_view::npos) break;
        line.remove_prefix(start);
        const auto end = line.find(' ');
        out.push_back(line.substr(0, end));
        if (end == std::string_view::npos) break;
        line.remove_prefix(end);
    }
    return out;
}

template <class T> bool parse_number(std::string_view text, T& out, int base) {
    const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), out, base);
    return err == std::errc() && end == text.data() + text.size() && !text.empty();
}

// "0100007F:1F90" or a 32-digit IPv6 address and ":PORT" (hex).
bool parse_port(std::string_view endpoint, std::uint16_t& port) {
    const auto colon = endpoint.rfind(':');
    return colon != std::string_view::npos && parse_number(endpoint.substr(colon + 1), port, 16);
}

std::string read_all(const std::filesystem::path& path) { return read_file_cloexec(path); }

}  // namespace

std::vector<TcpSocket> parse_proc_net_tcp(std::string_view table) {
    std::vector<TcpSocket> out;
    while (!table.empty()) {
        const auto nl = table.find('\n');
        const auto f = fields(table.substr(0, nl));
        table.remove_prefix(nl == std::string_view::npos ? table.size() : nl + 1);
        // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
        if (f.size() < 10 || f[0].empty() || f[0].back() != ':') continue;
        TcpSocket s;
        if (!parse_port(f[1], s.local_port) || !parse_port(f[2], s.remote_port) || !parse_number(f[3], s.state, 16) ||
            !parse_number(f[9], s.inode, 10)) {
            continue;
        }
        out.push_back(s);
    }
    return out;
}

std::vector<TcpSocket> tcp_sockets_of(pid_t pid) {
    const std::filesystem::path proc = "/proc/" + std::to_string(pid);
    std::vector<std::uint64_t> inodes;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(proc / "fd", ec)) {
        std::error_code link_ec;
        const auto target = std::filesystem::read_symlink(entry.path(), link_ec).string();
        constexpr std::string_view prefix = "socket:[";
        if (link_ec || target.rfind(prefix, 0) != 0 || target.back() != ']') continue;
        std::uint64_t inode = 0;
        if (parse_number(std::string_view(target).substr(prefix.size(), target.size() - prefix.size() - 1), inode, 10)) {
            inodes.push_back(inode);
        }
    }
    std::sort(inodes.begin(), inodes.end());
    std::vector<TcpSocket> out;
    for (const char* table : {"net/tcp", "net/tcp6"}) {
        for (const auto& s : parse_proc_net_tcp(read_all(proc / table))) {
            if (std::binary_search(inodes.begin(), inodes.end(), s.inode)) out.push_back(s);
        }
    }
    return out;
}

}  // namespace zklock::testing::detail
