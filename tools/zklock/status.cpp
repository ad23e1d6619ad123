// zklock status: the queue of a lock, holder first.
#include "commands.hpp"

#include <zklock/detail/path.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace zklock::cli {
namespace {

struct status_options {
    std::string connect;
    int connect_timeout_ms = 15000;
    bool json = false;
    std::string path;
};

std::string hex_session(std::int64_t id) {
    std::ostringstream out;
    out << "0x" << std::hex << static_cast<std::uint64_t>(id);
    return out.str();
}

// 350ms, 1.2s, 3m4s, 2h5m, 3d4h.
std::string human_age(std::int64_t ms) {
    if (ms < 0) ms = 0;
    if (ms < 1000) return std::to_string(ms) + "ms";
    if (ms < 60'000) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms / 100) / 10.0);
        return buf;
    }
    const std::int64_t s = ms / 1000;
    if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
    if (s < 86400) return std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m";
    return std::to_string(s / 86400) + "d" + std::to_string(s % 86400 / 3600) + "h";
}

int status_command(const status_options& o) {
    if (const auto check = detail::validate_lock_path(o.path); !check) {
        std::cerr << "zklock: " << check.reason << ": '" << o.path << "'\n";
        return exit_usage;
    }
    SessionOptions so;
    so.connect = o.connect;
    so.connect_timeout = std::chrono::milliseconds(o.connect_timeout_ms);
    Session session(so);
    std::error_code ec;
    session.connect(ec);
    if (ec == errc::timeout) {
        std::cerr << "zklock: could not connect to " << o.connect << " within " << o.connect_timeout_ms << " ms\n";
        return exit_unavailable;
    }
    if (ec == errc::invalid_argument) {
        std::cerr << "zklock: invalid connect string '" << o.connect << "'\n";
        return exit_usage;
    }
    if (ec) {
        std::cerr << "zklock: could not connect to " << o.connect << ": " << ec.message() << "\n";
        return exit_unavailable;
    }
    const auto queue = list_contenders(session, o.path, ec);
    if (ec) {
        std::cerr << "zklock: could not list " << o.path << ": " << ec.message() << "\n";
        return exit_unavailable;
    }
    // ctime is the server's clock: ages are off by the clock difference, if any.
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();

    if (o.json) {
        nlohmann::ordered_json out{{"path", o.path}, {"contenders", nlohmann::ordered_json::array()}};
        for (const auto& c : queue) {
            out["contenders"].push_back({{"position", c.position},
                                         {"node", c.node},
                                         {"fencing_token", c.fencing_token},
                                         {"owner_session", hex_session(c.owner_session)},
                                         {"created_ms", c.created_ms},
                                         {"data", c.data},
                                         {"age_ms", std::max<std::int64_t>(0, now_ms - c.created_ms)}});
        }
        std::cout << out.dump(2) << std::endl;
        return 0;
    }
    if (queue.empty()) {
        std::cout << o.path << ": no contenders\n";
        return 0;
    }
    std::size_t node_width = 4;
    for (const auto& c : queue) node_width = std::max(node_width, c.node.size());
    std::cout << o.path << ": " << queue.size() << (queue.size() == 1 ? " contender" : " contenders")
              << " (position 0 holds the lock)\n";
    std::cout << std::left << std::setw(5) << "POS" << std::setw(static_cast<int>(node_width) + 2) << "NODE"
              << std::setw(14) << "TOKEN" << std::setw(20) << "OWNER" << std::setw(10) << "AGE" << "DATA\n";
    for (const auto& c : queue) {
        std::cout << std::left << std::setw(5) << c.position << std::setw(static_cast<int>(node_width) + 2) << c.node
                  << std::setw(14) << c.fencing_token << std::setw(20) << hex_session(c.owner_session)
                  << std::setw(10) << human_age(now_ms - c.created_ms) << c.data << "\n";
    }
    return 0;
}

} // namespace

void add_status(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<status_options>();
    auto* cmd = app.add_subcommand("status", "Show the queue of a lock: holder first, then waiters in order");
    cmd->footer("Exit status: 0 (also when nobody holds the lock); 64 bad lock path; 69 no server reachable.");
    add_connect_option(*cmd, o->connect);
    cmd->add_option("--connect-timeout", o->connect_timeout_ms, "Give up connecting after MS ms")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--json", o->json, "Print one JSON object: {path, contenders: [{position, node, ...}]}");
    cmd->add_option("LOCK_PATH", o->path, "Lock znode, e.g. /locks/nightly-report")->required();
    cmd->callback([o, &exit_code] { exit_code = status_command(*o); });
}

} // namespace zklock::cli
