#include "zklock/testing/packet_filter.hpp"

#include "testing/run_command.hpp"

#include "zklock/testing/process.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <sys/stat.h>
#include <unistd.h>

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view comment_prefix = "zklock-testing pid=";
constexpr auto iptables_timeout = 30s;

bool executable(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// PATH first, then where Debian installs it (a non-root PATH often lacks sbin).
std::optional<std::string> find_iptables() {
    std::vector<std::string> dirs;
    if (const char* path = std::getenv("PATH"); path != nullptr) {
        std::string_view rest(path);
        while (true) {
            const auto colon = rest.find(':');
            if (!rest.substr(0, colon).empty()) dirs.emplace_back(rest.substr(0, colon));
            if (colon == std::string_view::npos) break;
            rest.remove_prefix(colon + 1);
        }
    }
    dirs.insert(dirs.end(), {"/usr/sbin", "/sbin"});
    for (const auto& dir : dirs) {
        const auto candidate = dir + "/iptables";
        if (executable(candidate)) return candidate;
    }
    return std::nullopt;
}

const std::optional<std::string>& iptables_path() {
    static const std::optional<std::string> path = find_iptables();
    return path;
}

std::string trimmed(std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    return text;
}

detail::CommandResult iptables(std::vector<std::string> args) {
    if (!iptables_path()) throw std::runtime_error("iptables not found (Debian package iptables)");
    args.insert(args.begin(), {*iptables_path(), "-w"});
    return detail::run_command(std::move(args), iptables_timeout);
}

std::string describe(const std::vector<std::string>& spec) {
    std::string out;
    for (const auto& a : spec) out += (out.empty() ? "" : " ") + a;
    return out;
}

}  // namespace

std::string packet_rule_comment(pid_t pid, std::string_view label) {
    const bool ok = std::all_of(label.begin(), label.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '.' || c == ':' || c == '-' ||
               c == '_' || c == '/';
    });
    if (!ok) throw std::invalid_argument("PacketFilter: label '" + std::string(label) + "' has other characters than [A-Za-z0-9 .:-_/]");
    std::string out(comment_prefix);
    out += std::to_string(pid);
    if (!label.empty()) out += " " + std::string(label);
    return out;
}

std::vector<std::string> packet_rule_spec(const TcpPacketMatch& match, const std::string& comment) {
    std::vector<std::string> spec{"-i", "lo", "-p", "tcp"};
    if (match.source_port != 0) spec.insert(spec.end(), {"--sport", std::to_string(match.source_port)});
    if (match.destination_port != 0) spec.insert(spec.end(), {"--dport", std::to_string(match.destination_port)});
    spec.insert(spec.end(), {"-m", "comment", "--comment", comment, "-j", "DROP"});
    return spec;
}

std::vector<std::string> zklock_rules_in(std::string_view output, pid_t owner) {
    std::vector<std::string> rules;
    while (!output.empty()) {
        const auto nl = output.find('\n');
        const auto line = output.substr(0, nl);
        output.remove_prefix(nl == std::string_view::npos ? output.size() : nl + 1);
        const auto at = line.find(comment_prefix);
        if (at == std::string_view::npos || line.rfind("-A ", 0) != 0) continue;
        if (owner != 0) {
            const auto digits = line.substr(at + comment_prefix.size());
            pid_t pid = 0;
            const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
            const bool whole = end == digits.data() + digits.size() || *end == ' ' || *end == '"';
            if (err != std::errc() || !whole || pid != owner) continue;
        }
        rules.emplace_back(line);
    }
    return rules;
}

std::uint64_t dropped_packets_in(std::string_view output, std::string_view comment) {
    const std::string quoted = "--comment \"" + std::string(comment) + "\" ";
    const std::string bare = "--comment " + std::string(comment) + " ";
    std::uint64_t total = 0;
    while (!output.empty()) {
        const auto nl = output.find('\n');
        const auto line = output.substr(0, nl);
        output.remove_prefix(nl == std::string_view::npos ? output.size() : nl + 1);
        if (line.rfind("-A ", 0) != 0) continue;
        if (line.find(quoted) == std::string_view::npos && line.find(bare) == std::string_view::npos) continue;
        const auto at = line.find(" -c ");
        if (at == std::string_view::npos) continue;
        const auto digits = line.substr(at + 4);
        std::uint64_t packets = 0;
        const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), packets);
        if (err == std::errc() && end != digits.data()) total += packets;
    }
    return total;
}

PacketFilter::PacketFilter(std::string label) : comment_(packet_rule_comment(::getpid(), label)) {}

PacketFilter::~PacketFilter() {
    try {
        clear();
    } catch (...) {
    }
}

PacketFilter::PacketFilter(PacketFilter&& other) noexcept
    : comment_(std::move(other.comment_)), rules_(std::exchange(other.rules_, {})) {}

PacketFilter& PacketFilter::operator=(PacketFilter&& other) noexcept {
    if (this != &other) {
        try {
            clear();
        } catch (...) {
        }
        comment_ = std::move(other.comment_);
        rules_ = std::exchange(other.rules_, {});
    }
    return *this;
}

void PacketFilter::drop(const TcpPacketMatch& match) {
    auto spec = packet_rule_spec(match, comment_);
    std::vector<std::string> args{"-I", "INPUT", "1"};
    args.insert(args.end(), spec.begin(), spec.end());
    const auto result = iptables(std::move(args));
    if (!result.ok()) {
        throw std::runtime_error("PacketFilter: iptables -I INPUT 1 " + describe(spec) + " failed (" +
                                 describe_wait_status(result.status) + "): " + trimmed(result.output));
    }
    rules_.push_back(match);
}

void PacketFilter::clear() {
    std::string failures;
    // Newest first: each -D removes the first rule with this exact spec.
    while (!rules_.empty()) {
        const auto spec = packet_rule_spec(rules_.back(), comment_);
        std::vector<std::string> args{"-D", "INPUT"};
        args.insert(args.end(), spec.begin(), spec.end());
        try {
            const auto result = iptables(std::move(args));
            if (!result.ok()) failures += "\n  " + describe(spec) + ": " + trimmed(result.output);
        } catch (const std::exception& e) {
            failures += "\n  " + describe(spec) + ": " + e.what();
        }
        rules_.pop_back();
    }
    if (!failures.empty()) throw std::runtime_error("PacketFilter: could not remove" + failures);
}

const std::vector<TcpPacketMatch>& PacketFilter::rules() const noexcept { return rules_; }

const std::string& PacketFilter::comment() const noexcept { return comment_; }

std::uint64_t PacketFilter::dropped_packets() const {
    if (rules_.empty()) return 0;
    const auto result = iptables({"-v", "-S", "INPUT"});
    if (!result.ok()) throw std::runtime_error("iptables -v -S INPUT failed: " + trimmed(result.output));
    return dropped_packets_in(result.output, comment_);
}

std::optional<std::string> PacketFilter::unavailable() {
    static std::once_flag once;
    static std::optional<std::string> reason;
    std::call_once(once, [] {
        if (!iptables_path()) {
            reason = "iptables not found in PATH, /usr/sbin or /sbin (Debian package iptables)";
            return;
        }
        try {
            const auto result = iptables({"-S", "INPUT"});
            if (!result.ok()) reason = "iptables -S INPUT failed: " + trimmed(result.output);
        } catch (const std::exception& e) {
            reason = std::string("iptables cannot be run: ") + e.what();
        }
    });
    return reason;
}

std::vector<std::string> zklock_packet_rules(pid_t owner) {
    const auto result = iptables({"-S", "INPUT"});
    if (!result.ok()) throw std::runtime_error("iptables -S INPUT failed: " + trimmed(result.output));
    return zklock_rules_in(result.output, owner);
}

}  // namespace zklock::testing
