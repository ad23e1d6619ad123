// The simulated ZooKeeper ensemble: the leader's data tree
// (znodes with their Stat, per-parent sequence counters of child creates,
// signed 32-bit, apart from the cversion, which counts deletes too; ephemeral owners, container nodes reaped once empty), sessions
// with negotiated timeouts and expiry, one-shot data and child watches, multi
// (all or nothing, one zxid), sync, and ACLs in one shape: a node's
// permissions for every session but the one that set them last (a neighbour's
// setACL), checked where ZooKeeper checks them; and 0 to 2 followers
// (follower.hpp) whose views lag the leader's. The network
// (fake_zookeeper.cpp) calls apply() when a request reaches the session's
// server and delivers what it returns.
#pragma once

#include "follower.hpp"
#include "world.hpp"

#include <zookeeper.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace zklock::sim {

struct zk_request {
    enum class op { create, remove, set_data, get_data, exists, get_children, sync, multi, check, get_acl, set_acl,
                    remove_watches, ping };
    op type = op::ping;
    std::string path;
    std::string data;
    int flags = 0;
    int version = -1;
    bool watch = false;
    /// set_acl: the permissions (ZOO_PERM_*) left to every session but this
    /// request's; -1 leaves the ACL as it is (zklock's own set_acl calls).
    int acl_perms = -1;
    std::vector<zk_request> ops{};  // multi
};

struct zk_reply {
    int rc = ZOK;
    std::string name;  // create
    Stat stat{};
    std::string data;
    std::vector<std::string> children;
    std::vector<int> op_rc;           // multi
    std::vector<std::string> op_name;  // multi
    std::int64_t zxid = 0;  // the answering server's last applied zxid (the reply header's)
};

class zk_server {
public:
    explicit zk_server(world& w) : world_(w) {}

    /// A watch event for `session` (delivered in order with its replies).
    std::function<void(std::int64_t session, int type, const std::string& path)> on_event;
    /// A request of `session` was applied (for the workloads' invariants at commit).
    std::function<void(std::int64_t session, const zk_request&, const zk_reply&)> on_applied;
    /// The server ended `session` (expiry): its connection is closed.
    std::function<void(std::int64_t session)> on_expired;

    std::int64_t open_session(int requested_timeout_ms, int& negotiated_ms);
    bool alive(std::int64_t session) const { return sessions_.count(session) != 0; }
    /// The server heard from `session` now.
    void touch(std::int64_t session);
    /// The session's client closed it.
    void close_session(std::int64_t session);
    /// Ends the session now (as its timeout would).
    void expire(std::int64_t session);
    /// The request reaches server `server` (0: the leader; others: followers,
    /// which answer reads from their view and forward the rest to the leader).
    zk_reply apply(std::int64_t session, const zk_request& r, int server = 0);

    /// An ensemble of `servers` (1 to 3): followers lag the leader by up to `max_lag` each.
    void add_follower(nanos max_lag);
    /// Server `server` (a follower) stops applying the leader's log by itself
    /// (`held`), or goes on; a write or a sync that it forwards still makes it
    /// catch up, as it does ZooKeeper's.
    void hold(int server, bool held);
    int servers() const noexcept { return 1 + static_cast<int>(followers_.size()); }
    /// The last zxid server `server` applied.
    std::int64_t applied(int server) const noexcept {
        return server == 0 ? zxid_ : followers_[static_cast<std::size_t>(server - 1)].applied;
    }
    /// A (re)connect of `session` to `server` was accepted; `last_zxid` is the
    /// last zxid the client saw (its watches move there, as setWatches does).
    void attach(std::int64_t session, int server, std::int64_t last_zxid);
    /// The server `session` is connected to now.
    int server_of(std::int64_t session) const;

    /// A persistent node made before the run (a lock directory whose counter is near the wrap).
    void precreate(const std::string& path, std::int32_t cversion);

    using znode = sim::znode;
    const std::map<std::string, znode>& nodes() const noexcept { return nodes_; }
    /// The last transaction's zxid: it moves with every change of the tree.
    std::int64_t last_zxid() const noexcept { return zxid_; }
    static const int tick_ms = 100;

private:
    struct session_state {
        int timeout_ms = 0;
        nanos heard = 0;
        std::uint64_t check = 0;  // the expiry check event
        std::set<std::string> ephemerals;
        int server = 0;  // the one it is connected to
    };
    zk_reply apply_on_leader(std::int64_t session, const zk_request& r);
    /// The transaction ends: the paths it changed go to the log, the followers catch up later.
    void commit();
    /// A change of `path` in the transaction under way.
    void changed(const std::string& path);
    void catch_up(std::size_t follower, std::int64_t zxid);
    void schedule_catch_up(std::size_t follower);
    server_view view_of(int server);
    int check_create(std::int64_t session, const std::string& path, int flags, std::string& made) const;
    void do_create(std::int64_t session, const std::string& path, const std::string& data, int flags, std::int64_t zxid,
                   std::string& made, Stat& st);
    int check_remove(std::int64_t session, const std::string& path, int version) const;
    /// set_data's and check's: no node, no permission (WRITE; check: READ), a version that differs.
    int check_write(std::int64_t session, const std::string& path, int version, int perm) const;
    void do_remove(const std::string& path, std::int64_t zxid);
    void fire(watch_table& watches, const std::string& path, int type);
    void schedule_check(std::int64_t session);
    void maybe_reap(const std::string& path);
    static std::string parent_of(const std::string& path);

    world& world_;
    znode_tree nodes_{{"/", znode{}}};
    std::map<std::int64_t, session_state> sessions_;
    watch_table data_watches_, child_watches_;
    std::int64_t zxid_ = 0;
    std::vector<follower> followers_;
    std::vector<txn_entry> log_;
    std::vector<std::string> changed_;  // in the transaction under way, in order
    std::int64_t logged_zxid_ = 0;      // the last zxid the followers were told of
    std::int64_t next_session_ = 0x100;
};

} // namespace zklock::sim
