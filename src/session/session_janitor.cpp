// The deletes the session owes (an abandoned node, a release's transaction):
// retried across connection loss until they commit or the session that owns
// the nodes is gone.
#include "session/session_impl.hpp"

#include "fsm/lock_set.hpp"
#include "fsm/reply_kind.hpp"

#include <zookeeper.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace zklock::detail {

void session_impl::delete_owned(std::string path, std::int64_t owner, std::function<void(std::error_code)> fn) {
    auto e = std::make_shared<janitor_entry>(janitor_entry{std::move(path), {}, {}, owner, std::move(fn), false, {}});
    janitor_.push_back(e);
    if (connected()) janitor_step(e);
}

void session_impl::delete_owned_by_guid(std::vector<std::string> dirs, std::string guid, std::int64_t owner,
                                        std::function<void(std::error_code)> fn) {
    auto first = dirs.empty() ? std::string() : dirs.front();
    auto e = std::make_shared<janitor_entry>(
        janitor_entry{std::move(first), std::move(guid), {}, owner, std::move(fn), false, std::move(dirs)});
    janitor_.push_back(e);
    if (connected()) janitor_step(e);
}

void session_impl::delete_owned_txn(owned_txn txn, std::int64_t owner, std::function<void(std::error_code)> fn) {
    auto e = std::make_shared<janitor_entry>(janitor_entry{{}, {}, std::move(txn), owner, std::move(fn), false, {}});
    janitor_.push_back(e);
    if (connected()) janitor_step(e);
}

void session_impl::janitor_txn_step(const std::shared_ptr<janitor_entry>& e, std::function<void(int rc)> on_delete) {
    multi(e->txn.ops(), [this, e, on_delete](int rc, std::vector<int> errors, std::vector<std::string>) {
        if (rc == ZOK) return on_delete(rc);
        switch (e->txn.judge(rc, errors)) {
        case owned_txn::verdict::finish: return on_delete(rc);
        case owned_txn::verdict::send_again:
            e->in_flight = false;
            return janitor_step(e);
        case owned_txn::verdict::delete_each: break;
        }
        e->in_flight = false;
        auto left = std::make_shared<std::size_t>(e->txn.nodes.size());
        for (const auto& p : e->txn.nodes)
            delete_owned(p, e->owner, [this, e, left](std::error_code ec) {
                if (--*left == 0) finish_janitor(e, ec);
            });
        const auto it = std::find(janitor_.begin(), janitor_.end(), e);
        if (it != janitor_.end()) janitor_.erase(it);  // finished by the last delete above
        if (e->txn.nodes.empty()) finish_janitor(e, {});
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
            log(log_level::warn, "deleting " + (e->txn.nodes.empty() ? e->path : e->txn.nodes.front()) + ": " +
                                     from_zookeeper(rc).message() + "; retried once connected");
            if (connected()) janitor_step(e);  // otherwise: retried on reconnect
            return;
        case detail::reply_kind::answer: return finish_janitor(e, from_zookeeper(rc));
        }
    };
    if (e->txn.ops) return janitor_txn_step(e, on_delete);
    if (e->guid.empty()) {
        remove(e->path, -1, on_delete);
        return;
    }
    janitor_guid_step(e, std::move(on_delete));
}

void session_impl::janitor_guid_step(const std::shared_ptr<janitor_entry>& e, std::function<void(int rc)> on_delete) {
    if (e->dirs.empty()) return on_delete(ZNONODE);
    // A node whose create's reply was lost may be missing from the listing of
    // a server that lags the one that applied it: a sync first (the server
    // runs a session's requests in order), as the acquire's recovery does.
    sync(e->dirs.front(), [](int) {});  // the answer is noted on its way
    struct gathered {
        std::size_t left;
        int rc = ZOK;  // the first failure but NONODE (a directory gone holds nothing of ours)
        std::vector<std::vector<std::string>> listings;
    };
    auto g = std::make_shared<gathered>(gathered{e->dirs.size(), ZOK, std::vector<std::vector<std::string>>(e->dirs.size())});
    for (std::size_t i = 0; i < e->dirs.size(); ++i) {
        get_children(e->dirs[i], [this, e, g, i, on_delete](int rc, std::vector<std::string> children) {
            if (rc == ZOK) g->listings[i] = std::move(children);
            else if (rc != ZNONODE && g->rc == ZOK) g->rc = rc;
            if (--g->left > 0) return;
            if (g->rc != ZOK) return on_delete(g->rc);
            const auto found = find_set_by_guid(g->listings, e->guid);
            std::vector<multi_op> deletes;
            for (std::size_t k = 0; k < e->dirs.size(); ++k)
                if (found.names[k]) deletes.push_back({multi_op::kind::remove, e->dirs[k] + "/" + *found.names[k], {}, 0, -1, nullptr});
            if (deletes.empty()) return on_delete(ZNONODE);
            if (deletes.size() == 1) return remove(deletes.front().path, -1, on_delete);
            multi(std::move(deletes), [this, e, on_delete](int rc, std::vector<int>, std::vector<std::string>) {
                if (rc != ZNONODE) return on_delete(rc);
                // One of them went meanwhile (another client deleted it): the rest, listed again.
                e->in_flight = false;
                janitor_step(e);
            });
        });
    }
}

} // namespace zklock::detail
