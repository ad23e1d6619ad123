// zklock write OP...: ZooKeeper writes that commit only while a lock is held,
// for commands run under `zklock run` or `zklock elect` ($ZKLOCK_LOCK_NODE):
// one transaction that checks the lock's node and carries the operations.
#include "commands.hpp"
#include "terminal_text.hpp"
#include "write_ops.hpp"

#include <zklock/guarded_write.hpp>
#include <zklock/session.hpp>

#include <cstdlib>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zklock::cli {
namespace {

inline constexpr int exit_op_failed = 65;  ///< EX_DATAERR: an operation failed (exists, missing, version)
inline constexpr int exit_unknown = 74;    ///< EX_IOERR: the connection broke with the transaction sent
inline constexpr const char* node_variable = "ZKLOCK_LOCK_NODE";

struct write_options {
    std::string connect = default_connect();
    std::chrono::milliseconds connect_timeout = default_connect_timeout;
    auth_options auth;
    std::vector<std::string> nodes;  // empty: $ZKLOCK_LOCK_NODE
    std::vector<std::string> words;
};

int write_command(const write_options& o) {
    std::vector<std::string> nodes = o.nodes;
    if (nodes.empty()) {
        const char* env = std::getenv(node_variable);
        nodes = lock_nodes_of(env ? env : "");
        if (nodes.empty()) {
            notice("no lock node: give --node NODE, or run under `zklock run` or `zklock elect`, which set " +
                   std::string(node_variable));
            return exit_usage;
        }
    }
    const auto parsed = parse_write_ops(o.words, [] {
        return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    });
    if (!parsed.error.empty()) {
        notice(parsed.error);
        return exit_usage;
    }
    const auto so = session_options_of(o.connect, o.connect_timeout, o.auth);
    if (!so) return exit_usage;
    Session session(*so);
    std::error_code ec;
    session.connect(ec);
    if (ec) return report_connect_failure(session, ec);
    const auto r = commit_guarded(session, nodes, parsed.ops, ec);
    if (!ec) {
        for (std::size_t i = 0; i < parsed.ops.size(); ++i)
            if (parsed.ops[i].type == guarded_op::kind::sequential) std::cout << r.created[i] << '\n';
        return 0;
    }
    if (ec == errc::node_deleted) {
        notice("the lock is no longer held (" +
               (nodes.size() == 1 ? "its node " + shortened(nodes[0]) + " is gone" : std::string("a node of the set is gone")) +
               "): nothing was written");
        return exit_lock_lost;
    }
    if (r.failed_op) {
        const auto& op = parsed.ops[*r.failed_op];
        notice("operation " + std::to_string(*r.failed_op + 1) + " (" + shortened(op.path) + ") failed: " +
               ec.message() + "; nothing was written");
        return ec == errc::no_auth ? exit_noperm : exit_op_failed;
    }
    if (ec == errc::connection_loss) {
        notice("the connection broke with the transaction sent: it may or may not have been applied");
        return exit_unknown;
    }
    return report_failure(session, "write", ec);
}

} // namespace

void add_write(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<write_options>();
    auto* cmd = app.add_subcommand("write", "Write ZooKeeper nodes only while a lock is held (one transaction)");
    cmd->footer(
        "One ZooKeeper transaction checks that the lock's node still exists and applies every OP, or applies\n"
        "nothing: a command whose lock was lost (its holder's session expired, an operator deleted the node)\n"
        "can never write. The lock node is --node, or ZKLOCK_LOCK_NODE, which zklock run and zklock elect give\n"
        "their command (a lock set's nodes, a line each: all are checked):\n"
        "    zklock run /locks/job -- sh -c 'zklock write set /jobs/state done'\n"
        "OP is one of: create PATH DATA (a persistent node; fails if it exists), sequential PREFIX DATA (a\n"
        "persistent sequential node; its path is printed), set PATH DATA, delete PATH, check PATH (applies\n"
        "nothing; fails unless PATH exists). set, delete and check take a version: set:3 PATH DATA applies only\n"
        "while PATH is at version 3. A DATA of - is read from stdin (once); put -- before the OPs when a DATA\n"
        "starts with '-' (zklock write -- set /x -5).\n"
        "Exit status: 0 written; 76 the lock is no longer held (nothing written); 65 an OP failed (the node\n"
        "exists, is missing, has another version or has children; nothing written); 64 bad arguments; 69 no\n"
        "server reachable; 74 the connection broke with the transaction sent (it may or may not have been\n"
        "applied); 77 not authorized.");
    add_connect_option(*cmd, o->connect);
    add_auth_options(*cmd, o->auth, false);
    add_connect_timeout_option(*cmd, o->connect_timeout);
    cmd->add_option("--node", o->nodes, "The lock node that guards the writes (default: $ZKLOCK_LOCK_NODE); repeatable")
        ->type_name("NODE")
        ->allow_extra_args(false);  // one NODE per --node: the words after it are OPs
    cmd->add_option("OP", o->words, "The operations, in order (see below)")->required();
    cmd->callback([o, &exit_code] { exit_code = write_command(*o); });
}

} // namespace zklock::cli
