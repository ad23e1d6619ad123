#include "zk_model.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zklock::sim {

std::string zk_server::parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::int64_t zk_server::open_session(int requested_timeout_ms, int& negotiated_ms) {
    negotiated_ms = std::clamp(requested_timeout_ms, 2 * tick_ms, 20 * tick_ms);
    const auto id = next_session_++;
    sessions_[id].timeout_ms = negotiated_ms;
    touch(id);
    return id;
}

void zk_server::touch(std::int64_t session) {
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    it->second.heard = world_.now();
    if (!it->second.check) schedule_check(session);
}

void zk_server::schedule_check(std::int64_t session) {
    auto& s = sessions_.at(session);
    s.check = world_.at(s.heard + ms(s.timeout_ms), -1, [this, session] {
        const auto it = sessions_.find(session);
        if (it == sessions_.end()) return;
        it->second.check = 0;
        if (world_.now() - it->second.heard >= ms(it->second.timeout_ms)) {
            world_.note("server expires session " + std::to_string(session));
            expire(session);
        } else {
            schedule_check(session);
        }
    });
}

void zk_server::close_session(std::int64_t session) {
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    const auto ephemerals = it->second.ephemerals;
    if (it->second.check) world_.cancel(it->second.check);
    sessions_.erase(it);
    for (const auto& p : ephemerals)
        if (nodes_.count(p)) do_remove(p, ++zxid_);
    commit();
}

void zk_server::expire(std::int64_t session) {
    if (!alive(session)) return;
    close_session(session);
    if (on_expired) on_expired(session);
}

void zk_server::precreate(const std::string& path, std::int32_t cversion) {
    std::string made;
    Stat st{};
    do_create(0, path, "", 0, ++zxid_, made, st);
    nodes_.at(path).stat.cversion = cversion;
    nodes_.at(path).next_sequence = cversion;
    commit();
}

int zk_server::check_create(std::int64_t session, const std::string& path, int flags, std::string& made) const {
    const auto parent = nodes_.find(parent_of(path));
    if (path.empty() || path[0] != '/' || (path.size() > 1 && path.back() == '/' && !(flags & ZOO_SEQUENCE)))
        return ZBADARGUMENTS;
    if (parent == nodes_.end()) return ZNONODE;
    if (!allowed(parent->second, session, ZOO_PERM_CREATE)) return ZNOAUTH;
    if (parent->second.stat.ephemeralOwner != 0) return ZNOCHILDRENFOREPHEMERALS;
    made = path;
    if (flags & ZOO_SEQUENCE) {
        char seq[16];
        std::snprintf(seq, sizeof seq, "%010d", parent->second.next_sequence);
        made += seq;
    }
    if (nodes_.count(made)) return ZNODEEXISTS;
    return ZOK;
}

void zk_server::do_create(std::int64_t session, const std::string& path, const std::string& data, int flags,
                          std::int64_t zxid, std::string& made, Stat& st) {
    if (check_create(session, path, flags, made) != ZOK) return;
    auto& parent = nodes_.at(parent_of(made));
    parent.children.insert(made.substr(made.rfind('/') + 1));
    parent.stat.cversion = static_cast<std::int32_t>(static_cast<std::uint32_t>(parent.stat.cversion) + 1u);
    parent.next_sequence = static_cast<std::int32_t>(static_cast<std::uint32_t>(parent.next_sequence) + 1u);
    parent.stat.numChildren = static_cast<std::int32_t>(parent.children.size());
    parent.stat.pzxid = zxid;
    znode n;
    n.data = data;
    n.container = (flags == ZOO_CONTAINER);
    n.stat.czxid = n.stat.mzxid = n.stat.pzxid = zxid;
    n.stat.ctime = n.stat.mtime = 1'700'000'000'000 + world_.now() / 1'000'000;
    n.stat.dataLength = static_cast<std::int32_t>(data.size());
    if (flags & ZOO_EPHEMERAL) {
        n.stat.ephemeralOwner = session;
        sessions_.at(session).ephemerals.insert(made);
    }
    st = n.stat;
    nodes_[made] = std::move(n);
    changed(made);
    changed(parent_of(made));
    fire(data_watches_, made, ZOO_CREATED_EVENT);
    fire(child_watches_, parent_of(made), ZOO_CHILD_EVENT);
}

int zk_server::check_remove(std::int64_t session, const std::string& path, int version) const {
    const auto it = nodes_.find(path);
    if (path == "/") return ZBADARGUMENTS;
    // As ZooKeeper: the parent's DELETE permission before the node is looked up.
    const auto parent = nodes_.find(parent_of(path));
    if (parent == nodes_.end()) return ZNONODE;
    if (!allowed(parent->second, session, ZOO_PERM_DELETE)) return ZNOAUTH;
    if (it == nodes_.end()) return ZNONODE;
    if (version != -1 && version != it->second.stat.version) return ZBADVERSION;
    if (!it->second.children.empty()) return ZNOTEMPTY;
    return ZOK;
}

int zk_server::check_write(std::int64_t session, const std::string& path, int version, int perm) const {
    const auto it = nodes_.find(path);
    if (it == nodes_.end()) return ZNONODE;
    if (!allowed(it->second, session, perm)) return ZNOAUTH;
    if (version != -1 && version != it->second.stat.version) return ZBADVERSION;
    return ZOK;
}

void zk_server::do_remove(const std::string& path, std::int64_t zxid) {
    const auto it = nodes_.find(path);
    if (const auto owner = it->second.stat.ephemeralOwner; owner != 0) {
        if (const auto s = sessions_.find(owner); s != sessions_.end()) s->second.ephemerals.erase(path);
    }
    nodes_.erase(it);
    const auto parent_path = parent_of(path);
    auto& parent = nodes_.at(parent_path);
    parent.children.erase(path.substr(path.rfind('/') + 1));
    parent.stat.cversion = static_cast<std::int32_t>(static_cast<std::uint32_t>(parent.stat.cversion) + 1u);
    parent.stat.numChildren = static_cast<std::int32_t>(parent.children.size());
    parent.stat.pzxid = zxid;
    changed(path);
    changed(parent_path);
    fire(data_watches_, path, ZOO_DELETED_EVENT);
    fire(child_watches_, path, ZOO_DELETED_EVENT);
    fire(child_watches_, parent_path, ZOO_CHILD_EVENT);
    maybe_reap(parent_path);
}

void zk_server::maybe_reap(const std::string& path) {
    const auto it = nodes_.find(path);
    if (it == nodes_.end() || !it->second.container || !it->second.children.empty()) return;
    // The container manager looks now and then; the node must still be empty then.
    world_.at(world_.now() + ms(world_.uniform(50, 500)), -1, [this, path] {
        const auto n = nodes_.find(path);
        if (n == nodes_.end() || !n->second.container || !n->second.children.empty()) return;
        world_.note("server reaps container " + path);
        do_remove(path, ++zxid_);
        commit();
    });
}

void zk_server::fire(watch_table& watches, const std::string& path, int type) {
    const auto it = watches.find(path);
    if (it == watches.end()) return;
    const auto sessions = std::move(it->second);
    watches.erase(it);
    for (const auto s : sessions)
        if (alive(s) && on_event) on_event(s, type, path);
}

void zk_server::add_follower(nanos max_lag) {
    if (zxid_ != 0) world_.model_error("a follower added once the tree had changed");
    followers_.emplace_back().max_lag = max_lag;
}

void zk_server::hold(int server, bool held) {
    auto& f = followers_.at(static_cast<std::size_t>(server - 1));
    f.held = held;
    if (!held && !f.catching_up && f.applied < zxid_) schedule_catch_up(static_cast<std::size_t>(server - 1));
}

server_view zk_server::view_of(int server) {
    if (server == 0) return {&nodes_, &data_watches_, &child_watches_};
    return followers_.at(static_cast<std::size_t>(server - 1)).view();
}

int zk_server::server_of(std::int64_t session) const {
    const auto it = sessions_.find(session);
    return it == sessions_.end() ? 0 : it->second.server;
}

void zk_server::attach(std::int64_t session, int server, std::int64_t last_zxid) {
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    const int from = std::exchange(it->second.server, server);
    if (from == server) return;
    move_watches(session, view_of(from), view_of(server), last_zxid, [this](std::int64_t s, int t, const std::string& p) {
        if (alive(s) && on_event) on_event(s, t, p);
    });
}

void zk_server::changed(const std::string& path) {
    if (std::find(changed_.begin(), changed_.end(), path) == changed_.end()) changed_.push_back(path);
}

void zk_server::commit() {
    if (followers_.empty()) {
        changed_.clear();
        return;
    }
    for (const auto& p : changed_) {
        const auto n = nodes_.find(p);
        log_.push_back(txn_entry{zxid_, p, n == nodes_.end() ? std::nullopt : std::optional<znode>(n->second)});
    }
    changed_.clear();
    if (zxid_ == logged_zxid_) return;
    logged_zxid_ = zxid_;
    for (std::size_t i = 0; i < followers_.size(); ++i)
        if (!followers_[i].catching_up) schedule_catch_up(i);
}

void zk_server::schedule_catch_up(std::size_t follower) {
    // A follower applies what the leader has now a bounded while later (at
    // most max_lag), in zxid order; what commits meanwhile, one lag after that.
    auto& f = followers_[follower];
    f.catching_up = true;
    world_.at(world_.now() + world_.uniform(0, f.max_lag), -1, [this, follower, z = zxid_] {
        followers_[follower].catching_up = false;
        if (followers_[follower].held) return;  // hold(false) schedules it again
        catch_up(follower, z);
        if (followers_[follower].applied < zxid_) schedule_catch_up(follower);
    });
}

void zk_server::catch_up(std::size_t follower, std::int64_t zxid) {
    followers_[follower].catch_up(log_, zxid, [this](std::int64_t s, int t, const std::string& p) {
        if (alive(s) && on_event) on_event(s, t, p);
    });
}

zk_reply zk_server::apply(std::int64_t session, const zk_request& r, int server) {
    using op = zk_request::op;
    if (server == 0) {
        auto out = apply_on_leader(session, r);
        out.zxid = zxid_;
        return out;
    }
    // A follower answers reads from its view; it forwards the rest to the
    // leader and, for a write or a sync, applies what the leader had before
    // it answers (a session sees its own writes; a sync catches up).
    const auto index = static_cast<std::size_t>(server - 1);
    auto& f = followers_.at(index);
    zk_reply out;
    switch (r.type) {
    case op::get_data:
    case op::exists:
    case op::get_children:
    case op::get_acl:
    case op::remove_watches:
        if (!alive(session)) {
            out.rc = ZSESSIONEXPIRED;
            return out;
        }
        touch(session);
        if (r.type != op::remove_watches) answer_read(f.view(), session, r, out, world_.rng());
        else if (const auto w = f.data_watches.find(r.path); w != f.data_watches.end()) w->second.erase(session);
        break;
    case op::ping: out = apply_on_leader(session, r); break;
    default:
        out = apply_on_leader(session, r);
        catch_up(index, zxid_);
        break;
    }
    out.zxid = f.applied;
    return out;
}

zk_reply zk_server::apply_on_leader(std::int64_t session, const zk_request& r) {
    using op = zk_request::op;
    zk_reply out;
    if (!alive(session)) {
        out.rc = ZSESSIONEXPIRED;
        return out;
    }
    touch(session);
    const auto node = nodes_.find(r.path);
    switch (r.type) {
    case op::ping:
    case op::sync:
    case op::set_acl:
        if (node == nodes_.end()) out.rc = ZNONODE;
        else if (!allowed(node->second, session, ZOO_PERM_ADMIN)) out.rc = ZNOAUTH;
        else if (r.acl_perms >= 0) {
            ++zxid_;
            changed(r.path);
            node->second.others_perms = r.acl_perms;
            node->second.acl_owner = session;
            node->second.stat.aversion++;
        }
        break;
    case op::get_acl:
    case op::get_data:
    case op::exists:
    case op::get_children: answer_read(view_of(0), session, r, out, world_.rng()); break;
    case op::remove_watches:
        if (const auto w = data_watches_.find(r.path); w != data_watches_.end()) w->second.erase(session);
        break;
    case op::create:
        out.rc = check_create(session, r.path, r.flags, out.name);
        if (out.rc == ZOK) do_create(session, r.path, r.data, r.flags, ++zxid_, out.name, out.stat);
        break;
    case op::remove:
        out.rc = check_remove(session, r.path, r.version);
        if (out.rc == ZOK) do_remove(r.path, ++zxid_);
        break;
    case op::check: out.rc = check_write(session, r.path, r.version, ZOO_PERM_READ); break;
    case op::set_data:
        out.rc = check_write(session, r.path, r.version, ZOO_PERM_WRITE);
        if (out.rc == ZOK) {
            auto& n = node->second;
            n.data = r.data;
            n.stat.version++;
            n.stat.mzxid = ++zxid_;
            n.stat.mtime = 1'700'000'000'000 + world_.now() / 1'000'000;
            n.stat.dataLength = static_cast<std::int32_t>(r.data.size());
            out.stat = n.stat;
            changed(r.path);
            fire(data_watches_, r.path, ZOO_CHANGED_EVENT);
        }
        break;
    case op::multi: {
        // All or nothing: tried on a copy of the tree first, with the events held back.
        const auto saved_nodes = nodes_;
        const auto saved_sessions = sessions_;
        const auto saved_data = data_watches_, saved_child = child_watches_;
        auto hook = std::move(on_event);
        std::vector<std::tuple<std::int64_t, int, std::string>> held;
        on_event = [&held](std::int64_t s, int t, const std::string& p) { held.emplace_back(s, t, p); };
        const auto zxid = ++zxid_;
        std::size_t failed = r.ops.size();
        for (std::size_t i = 0; i < r.ops.size(); ++i) {
            const auto& o = r.ops[i];
            int rc = ZOK;
            std::string made;
            if (o.type == op::create) {
                rc = check_create(session, o.path, o.flags, made);
                Stat st{};
                if (rc == ZOK) do_create(session, o.path, o.data, o.flags, zxid, made, st);
            } else if (o.type == op::remove) {
                rc = check_remove(session, o.path, o.version);
                if (rc == ZOK) do_remove(o.path, zxid);
            } else if (o.type == op::set_data || o.type == op::check) {
                rc = check_write(session, o.path, o.version, o.type == op::set_data ? ZOO_PERM_WRITE : ZOO_PERM_READ);
                const auto n = nodes_.find(o.path);
                if (rc == ZOK && o.type == op::set_data) {
                    n->second.data = o.data;
                    n->second.stat.version++;
                    n->second.stat.mzxid = zxid;
                    n->second.stat.dataLength = static_cast<std::int32_t>(o.data.size());
                    changed(o.path);
                    fire(data_watches_, o.path, ZOO_CHANGED_EVENT);
                }
            }
            out.op_rc.push_back(rc);
            out.op_name.push_back(made);
            if (rc != ZOK) {
                failed = i;
                break;
            }
        }
        on_event = std::move(hook);
        if (failed < r.ops.size()) {
            out.rc = out.op_rc[failed];
            nodes_ = saved_nodes;
            sessions_ = saved_sessions;
            data_watches_ = saved_data;
            child_watches_ = saved_child;
            changed_.clear();
            out.op_name.assign(r.ops.size(), "");
            for (std::size_t i = failed + 1; i < r.ops.size(); ++i) out.op_rc.push_back(ZRUNTIMEINCONSISTENCY);
        } else {
            for (auto& [s, t, p] : held)
                if (alive(s) && on_event) on_event(s, t, p);
        }
        break;
    }
    }
    commit();
    if (on_applied) on_applied(session, r, out);
    return out;
}

} // namespace zklock::sim
