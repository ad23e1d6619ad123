// zklock revoke TARGET...: ask a lock's holders (or one node) to let go, in
// Apache Curator's protocol (include/zklock/revocation.hpp): a revocable
// holder (zklock run --revocable, MutexOptions::revocable, a Curator
// InterProcessMutex after makeRevocable()) lets go; any other keeps the lock.
#include "commands.hpp"
#include "status_view.hpp"
#include "terminal_text.hpp"

#include <zklock/error.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/queue_view.hpp>
#include <zklock/revocation.hpp>
#include <zklock/session.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zklock::cli {
namespace {

inline constexpr int exit_no_such_node = 65;  ///< EX_DATAERR: a NODE does not exist (its hold ended)

struct revoke_options {
    std::string connect = default_connect();
    std::chrono::milliseconds connect_timeout = default_connect_timeout;
    auth_options auth;
    std::vector<std::string> targets;
};

// A node (its last element a contender's name, of any dialect) or a lock path.
bool is_node(const std::string& target) {
    return is_contender_node(std::string_view(target).substr(target.rfind('/') + 1));
}

// The nodes that hold `path` now, as zklock status shows them: a semaphore's
// first K, the readers ahead of the first writer or that writer, else the first.
std::vector<std::string> holder_nodes(Session& session, const std::string& path, std::error_code& ec) {
    const auto listing = list_queue(session, path, ec);
    if (ec) return {};
    const auto permits = permits_of(session, path, listing, ec);
    if (ec) return {};
    const auto holds = holders(listing, permits);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < holds.size(); ++i)
        if (holds[i]) out.push_back(path + "/" + listing.contenders[i].node);
    return out;
}

int revoke_command(const revoke_options& o) {
    for (const auto& target : o.targets)
        if (const auto problem = lock_path_problem(target); !problem.empty()) {
            notice(problem);
            return exit_usage;
        }
    const auto so = session_options_of(o.connect, o.connect_timeout, o.auth);
    if (!so) return exit_usage;
    Session session(*so);
    std::error_code ec;
    session.connect(ec);
    if (ec) return report_connect_failure(session, ec);
    int status = 0;
    for (const auto& target : o.targets) {
        std::vector<std::string> nodes;
        if (is_node(target)) {
            nodes.push_back(target);
        } else {
            nodes = holder_nodes(session, target, ec);
            if (ec == errc::no_auth) {
                report_failure(session, "list " + target, ec,
                               "not authorized: " + session.identity() + " may not read " + target);
                return exit_noperm;
            }
            if (ec) return report_failure(session, "list " + target, ec);
            if (nodes.empty()) notice("nobody holds " + target + ": no request written");
        }
        for (const auto& node : nodes) {
            request_revocation(session, node, ec);
            if (!ec) {
                std::cout << node << std::endl;
                continue;
            }
            if (ec == errc::no_node && !is_node(target)) continue;  // a holder that let go meanwhile
            if (ec == errc::no_node) {
                const auto chroot = missing_chroot_text(o.connect);
                notice(shortened(node) + " does not exist (its hold ended, or there never was such a node" +
                       (chroot.empty() ? std::string(")") : "; or " + chroot + ")"));
                status = exit_no_such_node;
                continue;
            }
            if (ec == errc::no_auth) {
                notice("not authorized: " + session.identity() + " may not write " + shortened(node) +
                       " (its ACL does not grant this identity w)");
                return exit_noperm;
            }
            if (ec == errc::invalid_argument) {
                notice(shortened(node) + " is not a lock node");
                return exit_usage;
            }
            return report_failure(session, "ask " + node + " to let go", ec);
        }
    }
    return status;
}

} // namespace

void add_revoke(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<revoke_options>();
    auto* cmd = app.add_subcommand("revoke", "Ask the holders of a lock (or one lock node) to let go");
    cmd->footer(
        "Writes a revocation request into each holder's node, as Apache Curator's Revoker.attemptRevoke() does\n"
        "(the node's data becomes __REVOKE__). Revocation is cooperative: a revocable holder lets go (zklock run\n"
        "--revocable ends its command and exits 79; a library lock with MutexOptions::revocable; Curator's\n"
        "InterProcessMutex after makeRevocable()); any other holder keeps the lock, and zklock status shows the\n"
        "request as pending until its node goes. A TARGET is a lock path, whose holders are asked (as zklock status\n"
        "shows them: the first in line, a semaphore's first K, the readers ahead of the first writer), or a node\n"
        "(a contender's full path, from zklock status or ZKLOCK_LOCK_NODE), which is asked whether it holds or\n"
        "waits (a waiting zklock lock honours it once granted). Prints each node asked, a line each.\n"
        "Exit status: 0 the requests were written (also when nobody holds a lock path: a note says so); 64 bad\n"
        "arguments (a TARGET that is no valid path); 65 a NODE does not exist (its hold ended); 69 no server\n"
        "reachable; 77 not authorized (the node's or the lock's ACL); 78 the connect string's chroot does not\n"
        "exist.");
    add_connect_option(*cmd, o->connect);
    add_auth_options(*cmd, o->auth, false);
    add_connect_timeout_option(*cmd, o->connect_timeout);
    cmd->add_option("TARGET", o->targets, "Lock paths (their holders are asked) or lock nodes")->required();
    cmd->callback([o, &exit_code] { exit_code = revoke_command(*o); });
}

} // namespace zklock::cli
