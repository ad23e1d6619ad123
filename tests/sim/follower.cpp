#include "follower.hpp"

#include "zk_model.hpp"

#include <algorithm>
#include <utility>

namespace zklock::sim {
namespace {

void fire(watch_table& watches, const std::string& path, int type, const event_sink& sink) {
    const auto it = watches.find(path);
    if (it == watches.end()) return;
    const auto sessions = std::move(it->second);
    watches.erase(it);
    for (const auto s : sessions) sink(s, type, path);
}

} // namespace

void answer_read(server_view view, std::int64_t session, const zk_request& r, zk_reply& out, std::mt19937_64& rng) {
    using op = zk_request::op;
    const auto& nodes = *view.nodes;
    const auto node = nodes.find(r.path);
    switch (r.type) {
    case op::get_acl:
        if (node == nodes.end()) out.rc = ZNONODE;
        else out.stat = node->second.stat;
        break;
    case op::get_data:
        if (node == nodes.end()) out.rc = ZNONODE;
        else if (!allowed(node->second, session, ZOO_PERM_READ)) out.rc = ZNOAUTH;
        else {
            out.data = node->second.data;
            out.stat = node->second.stat;
            if (r.watch) (*view.data_watches)[r.path].insert(session);
        }
        break;
    case op::exists:
        if (node == nodes.end()) out.rc = ZNONODE;
        else out.stat = node->second.stat;
        if (r.watch) (*view.data_watches)[r.path].insert(session);
        break;
    case op::get_children:
        if (node == nodes.end()) out.rc = ZNONODE;
        else if (!allowed(node->second, session, ZOO_PERM_READ)) out.rc = ZNOAUTH;
        else {
            out.stat = node->second.stat;
            out.children.assign(node->second.children.begin(), node->second.children.end());
            // The server's order is a hash set's: none the client may rely on.
            std::shuffle(out.children.begin(), out.children.end(), rng);
            if (r.watch) (*view.child_watches)[r.path].insert(session);
        }
        break;
    default: break;
    }
}

void move_watches(std::int64_t session, server_view from, server_view to, std::int64_t last_zxid,
                  const event_sink& fire_to) {
    // A watch still set on the old server saw no change of its node there
    // since it was set: the old view tells an exists watch on an absent node
    // from a data watch. The new view then fires, as setWatches does, what
    // changed after the client's last zxid, and keeps the rest.
    auto take = [session](watch_table& t) {
        std::vector<std::string> paths;
        for (auto it = t.begin(); it != t.end();) {
            if (it->second.erase(session)) paths.push_back(it->first);
            it = it->second.empty() ? t.erase(it) : std::next(it);
        }
        return paths;
    };
    for (const auto& p : take(*from.data_watches)) {
        const bool exists_watch = from.nodes->count(p) == 0;
        const auto n = to.nodes->find(p);
        if (exists_watch) {
            if (n != to.nodes->end()) fire_to(session, ZOO_CREATED_EVENT, p);
            else (*to.data_watches)[p].insert(session);
        } else if (n == to.nodes->end()) {
            fire_to(session, ZOO_DELETED_EVENT, p);
        } else if (n->second.stat.mzxid > last_zxid) {
            fire_to(session, ZOO_CHANGED_EVENT, p);
        } else {
            (*to.data_watches)[p].insert(session);
        }
    }
    for (const auto& p : take(*from.child_watches)) {
        const auto n = to.nodes->find(p);
        if (n == to.nodes->end()) fire_to(session, ZOO_DELETED_EVENT, p);
        else if (n->second.stat.pzxid > last_zxid) fire_to(session, ZOO_CHILD_EVENT, p);
        else (*to.child_watches)[p].insert(session);
    }
}

void follower::catch_up(const std::vector<txn_entry>& log, std::int64_t zxid, const event_sink& sink) {
    // The events of each change are the leader's (zk_model.cpp fire()): a
    // node made, deleted or written, a parent whose children changed.
    while (next_ < log.size() && log[next_].zxid <= zxid) {
        const auto& e = log[next_++];
        const auto old = nodes.find(e.path);
        const bool was = old != nodes.end();
        if (!e.after) {
            if (!was) continue;
            nodes.erase(old);
            fire(data_watches, e.path, ZOO_DELETED_EVENT, sink);
            fire(child_watches, e.path, ZOO_DELETED_EVENT, sink);
            continue;
        }
        if (!was) {
            nodes[e.path] = *e.after;
            fire(data_watches, e.path, ZOO_CREATED_EVENT, sink);
            continue;
        }
        const bool data_changed = old->second.stat.version != e.after->stat.version;
        const bool children_changed = old->second.children != e.after->children;
        old->second = *e.after;
        if (data_changed) fire(data_watches, e.path, ZOO_CHANGED_EVENT, sink);
        if (children_changed) fire(child_watches, e.path, ZOO_CHILD_EVENT, sink);
    }
    applied = std::max(applied, zxid);
}

} // namespace zklock::sim
