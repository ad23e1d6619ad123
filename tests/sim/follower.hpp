// The ensemble's followers and what every server shares with them: the znode,
// a tree of them, the watch tables, the leader's transaction log, and the
// reads any server answers from its own view. A follower holds the leader's
// tree as of its applied zxid: it replays the log in zxid order, a bounded
// lag behind the leader (zk_model.cpp schedules the catch-ups: at most
// 2 x max_lag), and fires the
// watches its sessions set there as it applies the changes.
#pragma once

#include "world.hpp"

#include <zookeeper.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace zklock::sim {

struct zk_request;
struct zk_reply;

struct znode {
    std::string data;
    Stat stat{};
    bool container = false;
    std::set<std::string> children;  // names
    // The next sequential child's number: ZooKeeper counts its parent's child
    // creates (signed 32-bit, wrapping), where the cversion counts deletes too.
    std::int32_t next_sequence = 0;
    int others_perms = ZOO_PERM_ALL;  // for every session but acl_owner
    std::int64_t acl_owner = 0;       // all permissions (0: nobody in particular)
};
using znode_tree = std::map<std::string, znode>;
/// Path -> the sessions watching it (data: getData and exists; child: getChildren).
using watch_table = std::map<std::string, std::set<std::int64_t>>;

/// One change of the leader's tree: `path` as it is after transaction `zxid` (none: deleted).
struct txn_entry {
    std::int64_t zxid = 0;
    std::string path;
    std::optional<znode> after;
};

/// A watch event for a session: (session, type, path).
using event_sink = std::function<void(std::int64_t, int, const std::string&)>;

/// One server's view for reads: its tree and the watches set on it.
struct server_view {
    znode_tree* nodes;
    watch_table* data_watches;
    watch_table* child_watches;
};

/// Whether `session` has `perm` on `n`.
inline bool allowed(const znode& n, std::int64_t session, int perm) {
    return session == n.acl_owner || (n.others_perms & perm) != 0;
}

/// get_data, exists, get_children, get_acl, answered from `view` (a watch
/// asked for is set there); `rng` shuffles the children as the server's hash set does.
void answer_read(server_view view, std::int64_t session, const zk_request& r, zk_reply& out, std::mt19937_64& rng);

/// The reconnect's setWatches: moves `session`'s watches from one server's
/// view to another's, firing (to `fire`) those the new view has already
/// overtaken since `last_zxid`, the last zxid the client saw, as ZooKeeper does.
void move_watches(std::int64_t session, server_view from, server_view to, std::int64_t last_zxid,
                  const event_sink& fire);

class follower {
public:
    znode_tree nodes{{"/", znode{}}};
    watch_table data_watches, child_watches;
    std::int64_t applied = 0;   // the last zxid it applied
    nanos max_lag = 0;          // how far behind the leader it runs at most
    bool catching_up = false;   // a catch-up is scheduled
    bool held = false;          // no catch-up by itself (zk_server::hold)

    server_view view() { return {&nodes, &data_watches, &child_watches}; }
    /// Applies the log's entries up to `zxid`, firing the watches the changes trigger.
    void catch_up(const std::vector<txn_entry>& log, std::int64_t zxid, const event_sink& fire);

private:
    std::size_t next_ = 0;  // the log index of the next entry to apply
};

} // namespace zklock::sim
