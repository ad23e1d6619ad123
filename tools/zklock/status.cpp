// zklock status: the queue of a lock, holder first.
#include "commands.hpp"
#include "terminal_text.hpp"

#include <zklock/detail/lock_set.hpp>
#include <zklock/detail/path.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

namespace zklock::cli {
namespace {

struct status_options {
    std::string connect;
    std::chrono::milliseconds connect_timeout = default_connect_timeout;
    bool json = false;
    auth_options auth;
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

// How to remove a node that never goes away by itself.
std::string removal_hint(const status_options& o, const contender& c) {
    return o.path + "/" + c.node +
           " is a persistent node (not ephemeral): no session end deletes it, and it blocks everyone queued "
           "behind it; delete it with: zkCli.sh -server " + o.connect + " delete " + o.path + "/" + c.node;
}

std::string_view kind_of(const contender& c) { return c.shared ? "shared" : "exclusive"; }

// The dialects in the queue, in name order: more than one means a mixed fleet.
std::vector<std::string> dialects_of(const std::vector<contender>& queue) {
    std::set<std::string> seen;
    for (const auto& c : queue) seen.insert(c.dialect);
    return {seen.begin(), seen.end()};
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

// A node's data as the DATA column shows it: escaped, and for a lock set's
// node the set's other lock paths.
std::string shown_data(const std::string& data, const std::string& path) {
    const auto set = detail::parse_set_node_data(data);
    std::string out = escape_control(set.data);
    std::vector<std::string> others;
    for (const auto& p : set.paths)
        if (p != path) others.push_back(escape_control(p));
    if (!set.paths.empty()) out += (out.empty() ? "" : " ") + std::string("[lock set, also: ") + joined(others) + "]";
    return out;
}

int status_command(const status_options& o) {
    if (const auto check = detail::validate_lock_path(o.path); !check) {
        notice(check.reason + ": '" + o.path + "'");
        return exit_usage;
    }
    SessionOptions so;
    so.connect = o.connect;
    so.connect_timeout = o.connect_timeout;
    if (!load_into(o.auth, so)) return exit_usage;
    Session session(so);
    std::error_code ec;
    session.connect(ec);
    if (ec) return report_connect_failure(session, ec);
    const auto listing = list_queue(session, o.path, ec);
    const auto& queue = listing.contenders;
    const auto dialects = dialects_of(queue);
    if (ec == errc::no_auth)
        return report_failure(session, "list " + o.path, ec,
                              "not authorized: " + session.identity() + " may not read " + o.path +
                                  " (its ACL does not grant this identity r)");
    if (ec) return report_failure(session, "list " + o.path, ec);
    // ctime is the server's clock: ages are off by the clock difference, if any.
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();

    if (o.json) {
        nlohmann::ordered_json out{{"path", o.path},
                                   {"contenders", nlohmann::ordered_json::array()},
                                   {"dialects", dialects},
                                   {"mixed_dialects", dialects.size() > 1},
                                   {"foreign", listing.foreign}};
        for (const auto& c : queue) {
            out["contenders"].push_back({{"position", c.position},
                                         {"node", c.node},
                                         {"dialect", c.dialect},
                                         {"kind", kind_of(c)},
                                         {"fencing_token", c.fencing_token},
                                         {"owner", c.data},
                                         {"owner_session", hex_session(c.owner_session)},
                                         {"persistent", c.persistent},
                                         {"created_ms", c.created_ms},
                                         {"data", detail::parse_set_node_data(c.data).data},
                                         {"age_ms", std::max<std::int64_t>(0, now_ms - c.created_ms)}});
            // A lock set's node: every lock path of its set.
            if (const auto set = detail::parse_set_node_data(c.data); !set.paths.empty())
                out["contenders"].back()["lock_set"] = set.paths;
        }
        // Node data is any bytes: invalid UTF-8 becomes U+FFFD instead of failing the dump.
        std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << std::endl;
        for (const auto& c : queue)
            if (c.persistent) notice(removal_hint(o, c));
        return 0;
    }
    // Children that are not contenders: not in the queue, shown so nobody wonders.
    const auto print_foreign = [&] {
        if (listing.foreign.empty()) return;
        std::vector<std::string> shown;
        for (const auto& f : listing.foreign) shown.push_back(escape_control(f));
        std::cout << "foreign children (no dialect recognises them; not in the queue): " << joined(shown) << "\n";
    };
    if (queue.empty()) {
        std::cout << escape_control(o.path) << ": no contenders\n";
        print_foreign();
        return 0;
    }
    // Node names and data come from whoever created the nodes: escaped.
    std::vector<std::string> names;
    std::size_t node_width = 4;
    for (const auto& c : queue) {
        names.push_back(escape_control(c.node));
        node_width = std::max(node_width, names.back().size());
    }
    std::cout << escape_control(o.path) << ": " << queue.size() << (queue.size() == 1 ? " contender" : " contenders")
              << " (position 0 holds the lock)\n";
    if (dialects.size() > 1)
        std::cout << "mixed dialects: " << joined(dialects) << " (every one of them queues in this order for zklock)\n";
    std::cout << std::left << std::setw(5) << "POS" << std::setw(static_cast<int>(node_width) + 2) << "NODE"
              << std::setw(14) << "DIALECT" << std::setw(11) << "KIND" << std::setw(14) << "TOKEN" << std::setw(20)
              << "SESSION" << std::setw(10) << "AGE" << "OWNER\n";
    for (std::size_t i = 0; i < queue.size(); ++i) {
        const auto& c = queue[i];
        std::cout << std::left << std::setw(5) << c.position << std::setw(static_cast<int>(node_width) + 2) << names[i]
                  << std::setw(14) << c.dialect << std::setw(11) << kind_of(c) << std::setw(14) << c.fencing_token
                  << std::setw(20) << (c.persistent ? std::string("persistent") : hex_session(c.owner_session))
                  << std::setw(10) << human_age(now_ms - c.created_ms) << shown_data(c.data, o.path) << "\n";
    }
    for (const auto& c : queue)
        if (c.persistent) std::cout << escape_control("note: " + removal_hint(o, c)) << "\n";
    print_foreign();
    return 0;
}

} // namespace

void add_status(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<status_options>();
    auto* cmd = app.add_subcommand("status", "Show the queue of a lock: holder first, then waiters in order");
    cmd->footer(
        "The queue holds the contenders of every dialect zklock reads (zklock, curator, kazoo, go-zookeeper,\n"
        "c-recipe; docs/interop.md): DIALECT says who made each node, KIND whether it holds alone (exclusive) or\n"
        "with other readers (shared); a line says when the queue mixes dialects, and children no dialect\n"
        "recognises are listed apart as foreign.\n"
        "OWNER is the node's data: the name given to zklock run --name or zklock lock --name (\"<host>:<pid>\" by\n"
        "default), an election candidate's id, a peer client's data. SESSION is the session that holds the node,\n"
        "or `persistent` for a node no session end deletes (a note says how to remove it). Node names and data are\n"
        "shown with control characters escaped (\\x1b); --json replaces invalid UTF-8, gives the data as both\n"
        "\"owner\" and \"data\", and marks such nodes \"persistent\": true.\n"
        "Exit status: 0 (also when nobody holds the lock); 64 bad lock path or auth file; 69 no server reachable\n"
        "(the message says what each server gave: connection refused, unreachable, no answer); 78 the chroot of\n"
        "the connect string does not exist;\n"
        "77 not authorized to read the lock (its ACL does not grant the auth file's identity r), or authentication\n"
        "refused.");
    add_connect_option(*cmd, o->connect);
    add_auth_options(*cmd, o->auth, false);
    add_connect_timeout_option(*cmd, o->connect_timeout);
    cmd->add_flag("--json", o->json,
                  "Print one JSON object: {path, contenders: [{position, node, dialect, kind, owner, ...}], dialects, "
                  "mixed_dialects, foreign}");
    cmd->add_option("LOCK_PATH", o->path, "Lock znode, e.g. /locks/nightly-report")->required();
    cmd->callback([o, &exit_code] { exit_code = status_command(*o); });
}

} // namespace zklock::cli
