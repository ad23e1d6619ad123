// The deletes the session owns (a released or abandoned node): retried across
// connection loss until they commit or the session that owns the node is gone.
#include "session/session_impl.hpp"

#include "fsm/lock_node.hpp"
#include "fsm/release_proof.hpp"
#include "fsm/reply_kind.hpp"

#include <algorithm>
#include <optional>

namespace zklock::detail {

void session_impl::delete_owned(std::string path, std::int64_t owner, std::function<void(std::error_code)> fn) {
    auto e = std::make_shared<janitor_entry>(janitor_entry{std::move(path), {}, {}, {}, owner, std::move(fn), false, false, nullptr});
    janitor_.push_back(e);
    if (connected()) janitor_step(e);
}

void session_impl::delete_owned_by_guid(std::string dir, std::string guid, std::int64_t owner,
                                        std::function<void(std::error_code)> fn) {
    auto e = std::make_shared<janitor_entry>(janitor_entry{std::move(dir), std::move(guid), {}, {}, owner, std::move(fn), false, false, nullptr});
    janitor_.push_back(e);
    if (connected()) janitor_step(e);
}

void session_impl::delete_owned_set(std::vector<std::string> paths, std::int64_t owner,
                                    std::function<void(std::error_code)> fn, std::vector<multi_op> extra, bool mark,
                                    std::shared_ptr<const c_acl> proof) {
    auto e = std::make_shared<janitor_entry>(janitor_entry{{}, {}, std::move(paths), std::move(extra), owner,
                                                           std::move(fn), false, mark, mark ? std::move(proof) : nullptr});
    janitor_.push_back(e);
    if (connected()) janitor_step(e);
}

std::vector<multi_op> release_ops(const std::vector<std::string>& paths, bool mark,
                                  const std::shared_ptr<const c_acl>& proof, const std::vector<multi_op>& extra,
                                  std::vector<release_role>* roles) {
    std::vector<multi_op> ops;
    const auto add = [&](multi_op op, release_role r) {
        ops.push_back(std::move(op));
        if (roles) roles->push_back(r);
    };
    for (const auto& p : paths) {
        if (proof) {
            // The `.released` sibling, created and deleted first: its successor's
            // exists watch fires before the data watch the mark fires.
            const auto sibling = release_proof_path(p);
            add({multi_op::kind::create, sibling, {}, ZOO_EPHEMERAL, -1, proof}, release_role::proof);
            add({multi_op::kind::remove, sibling, {}, 0, -1, nullptr}, release_role::proof);
        }
        if (mark) add({multi_op::kind::set_data, p, {}, 0, -1, nullptr}, release_role::mark);
        add({multi_op::kind::remove, p, {}, 0, -1, nullptr}, release_role::remove);
    }
    for (const auto& op : extra) add(op, release_role::extra);
    return ops;
}

void session_impl::janitor_set_step(const std::shared_ptr<janitor_entry>& e, std::function<void(int rc)> on_delete) {
    std::vector<release_role> roles;
    auto ops = release_ops(e->set, e->mark, e->proof, e->extra, &roles);
    multi(std::move(ops), [this, e, on_delete, roles = std::move(roles)](int rc, std::vector<int> errors,
                                                                         std::vector<std::string>) {
        // The op the server refused: the first whose code is neither ZOK nor
        // the "rolled back" of the ops after it.
        const auto refused = std::find_if(errors.begin(), errors.end(),
                                          [](int c) { return c != ZOK && c != ZRUNTIMEINCONSISTENCY; });
        const auto at = static_cast<std::size_t>(refused - errors.begin());
        const auto refused_role = at < roles.size() ? std::optional(roles[at]) : std::nullopt;
        if (refused_role == release_role::proof && rc != ZNONODE &&
            detail::classify_reply(rc) == detail::reply_kind::answer) {
            // The server refused the sibling (one exists already, the
            // directory's ACL): release without the proof (the mark still
            // tells the successor). A lost connection is no refusal: the
            // transaction is retried whole; a directory gone is the node gone.
            e->proof = nullptr;
            e->in_flight = false;
            return janitor_step(e);
        }
        if (rc == ZNOAUTH && refused_role == release_role::mark) {
            // The node's ACL does not let us write it: release it without the
            // mark (its successor lists the queue instead).
            e->mark = false;
            e->in_flight = false;
            return janitor_step(e);
        }
        if (rc != ZNONODE) return on_delete(rc);
        // One of them is gone already: delete the others one by one (a set
        // with a node missing is no longer held by anyone).
        e->in_flight = false;
        auto left = std::make_shared<std::size_t>(e->set.size());
        for (const auto& p : e->set)
            delete_owned(p, e->owner, [this, e, left](std::error_code ec) {
                if (--*left == 0) finish_janitor(e, ec);
            });
        const auto it = std::find(janitor_.begin(), janitor_.end(), e);
        if (it != janitor_.end()) janitor_.erase(it);  // finished by the last delete above
    });
}

void session_impl::run_janitor() {
    const auto entries = janitor_;
    for (const auto& e : entries) janitor_step(e);
}

void session_impl::finish_janitor(const std::shared_ptr<janitor_entry>& e, std::error_code ec) {
    const auto it = std::find(janitor_.begin(), janitor_.end(), e);
    if (it != janitor_.end()) janitor_.erase(it);
    if (e->done) {
        auto done = std::move(e->done);
        e->done = nullptr;
        done(ec);
    }
}

void session_impl::janitor_step(std::shared_ptr<janitor_entry> e) {
    if (e->in_flight || !connected()) return;
    if (e->owner != session_id_.load()) {
        // The session that owned the node is gone, and the node with it.
        finish_janitor(e, make_error_code(errc::session_expired));
        return;
    }
    e->in_flight = true;
    auto on_delete = [this, e](int rc) {
        e->in_flight = false;
        if (rc == ZNONODE) return finish_janitor(e, {});
        switch (detail::classify_reply(rc)) {
        case detail::reply_kind::ok: return finish_janitor(e, {});
        case detail::reply_kind::session_gone: return finish_janitor(e, make_error_code(errc::session_expired));
        case detail::reply_kind::closed: return finish_janitor(e, make_error_code(errc::session_closed));
        case detail::reply_kind::retry:
            log(log_level::warn, "deleting " + (e->set.empty() ? e->path : e->set.front()) + ": " +
                                     from_zookeeper(rc).message() + "; retried once connected");
            if (connected()) janitor_step(e);  // otherwise: retried on reconnect
            return;
        case detail::reply_kind::answer: return finish_janitor(e, from_zookeeper(rc));
        }
    };
    if (!e->set.empty()) return janitor_set_step(e, on_delete);
    if (e->guid.empty()) {
        remove(e->path, -1, on_delete);
        return;
    }
    get_children(e->path, [this, e, on_delete](int rc, std::vector<std::string> children) {
        if (rc == ZNONODE) return on_delete(ZNONODE);
        if (rc != ZOK) return on_delete(rc);
        const auto name = detail::find_by_guid(children, e->guid);
        if (!name) return on_delete(ZNONODE);
        remove(e->path + "/" + *name, -1, on_delete);
    });
}

} // namespace zklock::detail
