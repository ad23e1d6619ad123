#include <zklock/guarded_write.hpp>

#include <zklock/error.hpp>
#include <zklock/leader_election.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/session.hpp>

#include "engine/contender.hpp"
#include "fsm/guarded_txn.hpp"
#include "recipes/guarded_commit.hpp"
#include "session/session_access.hpp"
#include "session/session_impl.hpp"
#include "support/blocking_call.hpp"

#include <zookeeper.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace zklock {
namespace detail {
namespace {

multi_op to_multi_op(const guarded_op& op) {
    multi_op m;
    m.path = op.path;
    m.version = op.version;
    switch (op.type) {
    case guarded_op::kind::create:
    case guarded_op::kind::sequential:
        m.type = multi_op::kind::create;
        m.data = op.data;
        m.flags = op.type == guarded_op::kind::sequential ? ZOO_SEQUENCE : 0;  // persistent; the session's ACL
        m.version = -1;
        break;
    case guarded_op::kind::set_data:
        m.type = multi_op::kind::set_data;
        m.data = op.data;
        break;
    case guarded_op::kind::erase: m.type = multi_op::kind::remove; break;
    case guarded_op::kind::check: m.type = multi_op::kind::check; break;
    }
    return m;
}

guarded_result commit(const std::shared_ptr<session_impl>& session, const std::vector<std::string>& lock_nodes,
                      const std::vector<guarded_op>& ops, std::error_code& ec) {
    auto [e, answer, out] = wait_for_completion<std::error_code, guarded_result>(
        session->on_session_thread(), [&](auto done) {
            async_commit_guarded(session, lock_nodes, ops,
                                 [done](std::error_code code, guarded_result r) { done({}, code, std::move(r)); });
        });
    if (e) {
        ec = e;
        out.created.assign(ops.size(), std::string());
        return out;
    }
    ec = answer;
    return out;
}

guarded_result or_throw(guarded_result r, std::error_code ec, const std::vector<guarded_op>& ops, const char* who) {
    if (!ec) return r;
    std::string what = std::string("zklock::") + who;
    if (r.failed_op && *r.failed_op < ops.size())
        what += ": operation " + std::to_string(*r.failed_op) + " on " + ops[*r.failed_op].path + " failed";
    else if (ec == errc::node_deleted)
        what += ": the lock's node is gone (the lock is not held), nothing was applied";
    throw error(ec, what);
}

// The holder's form: refused (nothing sent) unless it holds.
guarded_result commit_held(bool held, const std::shared_ptr<session_impl>& session,
                           const std::vector<std::string>& nodes, const std::vector<guarded_op>& ops,
                           std::error_code& ec) {
    bool all = held && !nodes.empty();
    for (const auto& n : nodes) all = all && !n.empty();
    if (!all) {
        ec = make_error_code(errc::not_held);
        guarded_result r;
        r.created.resize(ops.size());
        return r;
    }
    return commit(session, nodes, ops, ec);
}

} // namespace

void async_commit_guarded(const std::shared_ptr<session_impl>& session, const std::vector<std::string>& lock_nodes,
                          const std::vector<guarded_op>& ops,
                          std::function<void(std::error_code, guarded_result)> fn) {
    guarded_result out;
    out.created.resize(ops.size());
    if (const auto check = validate_guarded(lock_nodes, ops, session->options().max_request_bytes); !check) {
        fn(check.error, std::move(out));
        return;
    }
    std::vector<multi_op> mops;
    mops.reserve(lock_nodes.size() + ops.size());
    for (const auto& node : lock_nodes) {
        multi_op guard;
        guard.type = multi_op::kind::check;
        guard.path = node;
        mops.push_back(std::move(guard));
    }
    for (const auto& op : ops) mops.push_back(to_multi_op(op));
    const auto guards = lock_nodes.size();
    session->post([session, mops = std::move(mops), guards, out = std::move(out), fn = std::move(fn)]() mutable {
        session->multi(std::move(mops), [guards, out = std::move(out), fn = std::move(fn)](
                                            int rc, std::vector<int> errors, std::vector<std::string> created) mutable {
            const auto outcome = read_guarded_answer(rc, errors, guards);
            out.failed_op = outcome.failed_op;
            if (!outcome.error)
                for (std::size_t i = 0; i < out.created.size() && guards + i < created.size(); ++i)
                    out.created[i] = std::move(created[guards + i]);
            fn(outcome.error, std::move(out));
        });
    });
}

} // namespace detail

guarded_result commit_guarded(Session& session, const std::vector<std::string>& lock_nodes,
                              const std::vector<guarded_op>& ops, std::error_code& ec) {
    ec.clear();
    return detail::commit(detail::session_access::session(session), lock_nodes, ops, ec);
}

guarded_result commit_guarded(Session& session, const std::vector<std::string>& lock_nodes,
                              const std::vector<guarded_op>& ops) {
    std::error_code ec;
    auto r = commit_guarded(session, lock_nodes, ops, ec);
    return detail::or_throw(std::move(r), ec, ops, "commit_guarded");
}

guarded_result QueueLock::commit_guarded(const std::vector<guarded_op>& ops, std::error_code& ec) {
    ec.clear();
    return detail::commit_held(is_held(), engine_->session(), {node_path()}, ops, ec);
}

guarded_result QueueLock::commit_guarded(const std::vector<guarded_op>& ops) {
    std::error_code ec;
    auto r = commit_guarded(ops, ec);
    return detail::or_throw(std::move(r), ec, ops, "QueueLock::commit_guarded");
}

guarded_result MultiMutex::commit_guarded(const std::vector<guarded_op>& ops, std::error_code& ec) {
    ec.clear();
    return detail::commit_held(is_held(), engine_->session(), node_paths(), ops, ec);
}

guarded_result MultiMutex::commit_guarded(const std::vector<guarded_op>& ops) {
    std::error_code ec;
    auto r = commit_guarded(ops, ec);
    return detail::or_throw(std::move(r), ec, ops, "MultiMutex::commit_guarded");
}

guarded_result LeaderElection::commit_guarded(const std::vector<guarded_op>& ops, std::error_code& ec) {
    return candidate_.commit_guarded(ops, ec);
}

guarded_result LeaderElection::commit_guarded(const std::vector<guarded_op>& ops) {
    std::error_code ec;
    auto r = candidate_.commit_guarded(ops, ec);
    return detail::or_throw(std::move(r), ec, ops, "LeaderElection::commit_guarded");
}

} // namespace zklock
