// Cooperative revocation's requests (include/zklock/revocation.hpp): the
// free request_revocation() and the recipes' revoke_holders() / revoke_leader().
// What a holder does with a request is the engines' (fsm/revocation.hpp decides).
#include <zklock/revocation.hpp>

#include <zklock/error.hpp>
#include <zklock/leader_election.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/session.hpp>

#include "engine/contender.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/path.hpp"
#include "fsm/revocation.hpp"
#include "session/session_access.hpp"
#include "session/session_impl.hpp"
#include "support/blocking_call.hpp"

#include <zookeeper.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zklock {
namespace detail {
namespace {

std::error_code reply_code(int rc) {
    if (rc == ZCLOSING) return make_error_code(errc::session_closed);
    return from_zookeeper(rc);
}

// Writes the request into every node of `nodes`, pipelined; the ZooKeeper code
// of each, in order. errc::would_deadlock (nothing sent) on the session's thread.
std::error_code write_requests(const std::shared_ptr<session_impl>& session, const std::vector<std::string>& nodes,
                               std::vector<int>& codes) {
    codes.assign(nodes.size(), ZOK);
    if (nodes.empty()) return {};
    auto [e, rcs] = wait_for_completion<std::vector<int>>(session->on_session_thread(), [&](auto done) {
        session->post([session, nodes, done]() mutable {
            struct gathering {
                std::vector<int> codes;
                std::size_t left;
                decltype(done) finish;
            };
            auto g = std::make_shared<gathering>(gathering{std::vector<int>(nodes.size(), ZOK), nodes.size(), done});
            for (std::size_t i = 0; i < nodes.size(); ++i)
                session->set_data(nodes[i], std::string(revocation_request_data), -1, [g, i](int rc) {
                    g->codes[i] = rc;
                    if (--g->left == 0) g->finish({}, std::move(g->codes));
                });
        });
    });
    if (e) return e;
    codes = std::move(rcs);
    return {};
}

// The lock directory's children, blocking.
std::error_code children_of(const std::shared_ptr<session_impl>& session, const std::string& dir,
                            std::vector<std::string>& children) {
    auto [e, rc, listed] = wait_for_completion<int, std::vector<std::string>>(
        session->on_session_thread(), [&](auto done) {
            session->post([session, dir, done] {
                session->get_children(dir, [done](int rc, std::vector<std::string> c) { done({}, rc, std::move(c)); });
            });
        });
    if (e) return e;
    if (rc == ZNONODE) {  // no lock directory: nobody holds
        children.clear();
        return {};
    }
    if (rc != ZOK) return reply_code(rc);
    children = std::move(listed);
    return {};
}

// Asks the holders of `dir` under `rule`, but `own` (our node's name, if any).
// A holder gone before its request came is no error: it let go anyway.
std::vector<std::string> ask_holders(const std::shared_ptr<session_impl>& session, const std::string& dir,
                                     const queue_rule& rule, const std::string& own, std::error_code& ec) {
    std::vector<std::string> children;
    if ((ec = children_of(session, dir, children))) return {};
    std::vector<std::string> nodes;
    for (const auto& name : holders_under(rule, children))
        if (name != own) nodes.push_back(child_path(dir, name));
    std::vector<int> codes;
    if ((ec = write_requests(session, nodes, codes))) return {};
    std::vector<std::string> asked;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (codes[i] == ZOK) asked.push_back(nodes[i]);
        else if (codes[i] != ZNONODE && !ec) ec = reply_code(codes[i]);
    }
    return asked;
}

[[noreturn]] void throw_for(const std::error_code& ec, const std::string& what) { throw error(ec, what); }

} // namespace
} // namespace detail

void request_revocation(Session& session, const std::string& node_path, std::error_code& ec) {
    ec.clear();
    if (const auto check = detail::check_revocation_target(node_path); !check) {
        ec = check.error;
        return;
    }
    std::vector<int> codes;
    if ((ec = detail::write_requests(detail::session_access::session(session), {node_path}, codes))) return;
    if (codes.front() != ZOK) ec = detail::reply_code(codes.front());
}

void request_revocation(Session& session, const std::string& node_path) {
    if (const auto check = detail::check_revocation_target(node_path); !check)
        detail::throw_for(check.error, "zklock::request_revocation: " + check.reason);
    std::error_code ec;
    request_revocation(session, node_path, ec);
    if (ec == errc::no_node)
        detail::throw_for(ec, "zklock::request_revocation: " + node_path +
                                  " does not exist (its hold ended, or there never was such a node)");
    if (ec) detail::throw_for(ec, "zklock::request_revocation: " + node_path);
}

std::vector<std::string> QueueLock::revoke_holders(std::error_code& ec) {
    ec.clear();
    const auto own = node_path();
    return detail::ask_holders(engine_->session(), engine_->dir(), engine_->rule(),
                               own.empty() ? own : own.substr(own.rfind('/') + 1), ec);
}

std::vector<std::string> QueueLock::revoke_holders() {
    std::error_code ec;
    auto asked = revoke_holders(ec);
    if (ec) detail::throw_for(ec, "zklock::QueueLock::revoke_holders: " + path());
    return asked;
}

std::vector<std::string> MultiMutex::revoke_holders(std::error_code& ec) {
    ec.clear();
    const auto own = node_paths();
    std::vector<std::string> asked;
    const auto& dirs = engine_->dirs();
    for (std::size_t i = 0; i < dirs.size() && !ec; ++i) {
        const auto ours = i < own.size() && !own[i].empty() ? own[i].substr(own[i].rfind('/') + 1) : std::string();
        for (auto& n : detail::ask_holders(engine_->session(), dirs[i], detail::queue_rule{}, ours, ec))
            asked.push_back(std::move(n));
    }
    return asked;
}

std::vector<std::string> MultiMutex::revoke_holders() {
    std::error_code ec;
    auto asked = revoke_holders(ec);
    if (ec) detail::throw_for(ec, "zklock::MultiMutex::revoke_holders");
    return asked;
}

std::optional<std::string> LeaderElection::revoke_leader(std::error_code& ec) {
    auto asked = candidate_.revoke_holders(ec);
    if (asked.empty()) return std::nullopt;
    return std::move(asked.front());
}

std::optional<std::string> LeaderElection::revoke_leader() {
    std::error_code ec;
    auto asked = revoke_leader(ec);
    if (ec) detail::throw_for(ec, "zklock::LeaderElection::revoke_leader: " + path());
    return asked;
}

} // namespace zklock
