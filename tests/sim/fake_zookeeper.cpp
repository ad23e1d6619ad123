// The simulated C client: the functions of zookeeper.h that zklock calls,
// over the simulated network and server (network.hpp, zk_model.hpp), so that
// zklock's session code runs unchanged. Like the real single-threaded client,
// everything happens inside zookeeper_process: replies, watch events (in the
// order the server sent them, an event before a later reply) and session
// events; a connection loss fails every request in flight with
// ZCONNECTIONLOSS, whether or not the server applied it. Each connection goes
// to a server of the ensemble the seed picks; one whose view is older than
// the client's last seen zxid refuses it, and the client tries again.
#include "network.hpp"

#include <zookeeper.h>
#include <zookeeper_log.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

ZooLogLevel logLevel = ZOO_LOG_LEVEL_ERROR;  // the C client's process-wide level

const int ZOO_PERM_READ = 1 << 0;
const int ZOO_PERM_WRITE = 1 << 1;
const int ZOO_PERM_CREATE = 1 << 2;
const int ZOO_PERM_DELETE = 1 << 3;
const int ZOO_PERM_ADMIN = 1 << 4;
const int ZOO_PERM_ALL = 0x1f;
struct Id ZOO_ANYONE_ID_UNSAFE = {const_cast<char*>("world"), const_cast<char*>("anyone")};
struct Id ZOO_AUTH_IDS = {const_cast<char*>("auth"), const_cast<char*>("")};
static struct ACL open_acl_entry[] = {{0x1f, {const_cast<char*>("world"), const_cast<char*>("anyone")}}};
static struct ACL read_acl_entry[] = {{1, {const_cast<char*>("world"), const_cast<char*>("anyone")}}};
static struct ACL creator_acl_entry[] = {{0x1f, {const_cast<char*>("auth"), const_cast<char*>("")}}};
struct ACL_vector ZOO_OPEN_ACL_UNSAFE = {1, open_acl_entry};
struct ACL_vector ZOO_READ_ACL_UNSAFE = {1, read_acl_entry};
struct ACL_vector ZOO_CREATOR_ALL_ACL = {1, creator_acl_entry};
const int ZOOKEEPER_WRITE = 1 << 0;
const int ZOOKEEPER_READ = 1 << 1;
const int ZOO_PERSISTENT = 0;
const int ZOO_EPHEMERAL = 1;
const int ZOO_PERSISTENT_SEQUENTIAL = 2;
const int ZOO_EPHEMERAL_SEQUENTIAL = 3;
const int ZOO_CONTAINER = 4;
const int ZOO_PERSISTENT_WITH_TTL = 5;
const int ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL = 6;
const int ZOO_SEQUENCE = 1 << 1;
const int ZOO_EXPIRED_SESSION_STATE = -112;
const int ZOO_AUTH_FAILED_STATE = -113;
const int ZOO_CONNECTING_STATE = 1;
const int ZOO_ASSOCIATING_STATE = 2;
const int ZOO_CONNECTED_STATE = 3;
const int ZOO_READONLY_STATE = 5;
const int ZOO_NOTCONNECTED_STATE = 999;
const int ZOO_CREATED_EVENT = 1;
const int ZOO_DELETED_EVENT = 2;
const int ZOO_CHANGED_EVENT = 3;
const int ZOO_CHILD_EVENT = 4;
const int ZOO_SESSION_EVENT = -1;
const int ZOO_NOTWATCHING_EVENT = -2;

using zklock::sim::nanos;
using zklock::sim::zk_reply;
using zklock::sim::zk_request;
using op = zk_request::op;

namespace {

struct net {
    zklock::sim::world* w = nullptr;
    zklock::sim::zk_server* server = nullptr;
    zklock::sim::network_options options;
    std::map<std::int64_t, zhandle_t*> by_session;
    std::map<int, zhandle_t*> by_fd;
    int route = -1;  // the server every connection goes to (-1: the seed picks)
};
net* the_net = nullptr;

std::string op_name(const zk_request& r) {
    static const char* names[] = {"create", "delete", "set", "get", "exists", "children", "sync", "multi", "check",
                                  "getacl", "setacl", "removewatches", "ping"};
    return std::string(names[static_cast<int>(r.type)]) + (r.watch ? "(watch) " : " ") + r.path;
}

nanos latency() { return the_net->w->uniform(the_net->options.min_latency, the_net->options.max_latency); }

} // namespace

struct _zhandle {
    using completion = std::function<void(int rc, const zk_reply&)>;
    struct sent_request {
        std::uint64_t xid;
        zk_request req;
        completion done;
        watcher_fn watcher = nullptr;
        void* watcher_ctx = nullptr;
    };
    struct in_flight {
        std::uint64_t conn;
        std::uint64_t xid;
        zk_request req;
        bool survives;
        std::int64_t session;
        int server;  // the connection's
    };
    enum class kind { reply, event, connected, expired, lost };
    struct message {
        nanos at;
        std::uint64_t conn;
        kind what;
        std::uint64_t xid = 0;
        zk_reply reply;
        int type = 0;
        std::string path;
    };
    int process = -1;
    watcher_fn watcher = nullptr;
    void* context = nullptr;
    log_callback_fn log = nullptr;
    int requested_timeout = 0;
    int negotiated = 0;
    int state = ZOO_CONNECTING_STATE;
    clientid_t cid{};
    int fd = -1;
    std::uint64_t conn = 0;        // the connection now (0: none)
    std::uint64_t connections = 0;  // made so far
    int server = 0;                 // the connection's (0: the leader)
    std::int64_t last_zxid = 0;     // the last zxid a reply carried
    std::uint64_t accepted_conn = 0;  // the last connection a server accepted, and that server
    int accepted_server = 0;
    bool handshaking = false;
    nanos up_last = 0, down_last = 0;          // global: FIFO both ways
    nanos last_recv = 0, last_send = 0;         // local
    nanos reconnect_at = 0;                     // local
    nanos handshake_deadline = 0;               // local
    nanos partitioned_until = 0;                // global
    bool drop_after_next = false;
    std::uint64_t next_xid = 1;
    std::deque<sent_request> unsent, sent;
    std::deque<message> inbound;
    std::vector<message> replay;  // watch events for the next connection
    std::deque<in_flight> held_up;  // requests a partition holds, in order
    bool drain_pending = false;
    std::map<std::string, std::vector<std::pair<watcher_fn, void*>>> data_w, exist_w, child_w;
    bool in_process = false;

    nanos local() const {
        return the_net->w->local_of(process, the_net->w->now());
    }
    /// Sends m to the client; during a partition TCP holds it until the partition ends.
    void deliver(message m) {
        m.at = std::max(down_last, std::max(the_net->w->now(), partitioned_until) + latency());
        down_last = m.at;
        inbound.push_back(std::move(m));
        const int f = fd;
        the_net->w->at(down_last, process, [f] { the_net->w->readable(f); });
    }
    void lose_connection_now() {
        // The server side closes: the client reads the end after a latency.
        message m{0, conn, kind::lost};
        if (conn) {
            // The reset waits out a partition as any segment does.
            deliver(std::move(m));
        }
    }
    void send(sent_request r) {
        r.xid = next_xid++;
        last_send = local();
        const nanos arrive = std::max(up_last, the_net->w->now() + latency());
        up_last = arrive;
        const bool survives = the_net->w->chance(the_net->options.in_flight_commits);
        const auto xid = r.xid;
        auto req = r.req;
        sent.push_back(std::move(r));
        resend(arrive, conn, xid, std::move(req), survives, cid.client_id, server);
    }
    /// The request `xid` of connection `c` reaches the server at `arrive`.
    void resend(nanos arrive, std::uint64_t c, std::uint64_t xid, zk_request req, bool survives, std::int64_t session,
                int to) {
        zhandle_t* self = this;
        const int f = fd;
        the_net->w->at(arrive, -1, [self, f, r = in_flight{c, xid, std::move(req), survives, session, to}]() mutable {
            if (!the_net->by_fd.count(f) || the_net->by_fd.at(f) != self) return;
            // During a partition TCP holds the segments, and sends them again,
            // in order, once it is over.
            if (the_net->w->now() < self->partitioned_until || !self->held_up.empty()) {
                self->held_up.push_back(std::move(r));
                self->drain_later();
                return;
            }
            self->reach_server(std::move(r));
        });
    }
    void drain_later() {
        if (drain_pending) return;
        drain_pending = true;
        zhandle_t* self = this;
        const int f = fd;
        the_net->w->at(partitioned_until, -1, [self, f] {
            if (!the_net->by_fd.count(f) || the_net->by_fd.at(f) != self) return;
            self->drain_pending = false;
            if (the_net->w->now() < self->partitioned_until) return self->drain_later();
            auto held = std::move(self->held_up);
            self->held_up.clear();
            for (auto& r : held) self->reach_server(std::move(r));
        });
    }
    void reach_server(in_flight r) {
        const auto c = r.conn;
        const auto& req = r.req;
        // A request in flight when its connection closed reached the server, or not.
        if (conn != c && !r.survives) return;
        // The session moved to another server since: the old one's request
        // fails there (ZooKeeper's SESSIONMOVED), applied nowhere.
        if (accepted_conn > c && accepted_server != r.server) {
            if (the_net->w->verbose)
                the_net->w->note("server " + std::to_string(r.server) + ": session " + std::to_string(r.session) +
                                 " moved; " + op_name(req) + " not applied");
            return;
        }
        auto reply = the_net->server->apply(r.session, req, r.server);
        if (the_net->w->verbose && req.type != op::ping) {
            std::string line = "server " + std::to_string(r.server) + ": session " + std::to_string(r.session) + " " + op_name(req) + " -> " +
                               std::to_string(reply.rc) + " " + reply.name;
            for (const auto& o : req.ops) line += " [" + op_name(o) + "]";
            for (const auto& ch : reply.children) line += " " + ch.substr(ch.size() > 14 ? ch.size() - 14 : 0);
            the_net->w->note(line);
        }
        if (conn != c) return;
        if (drop_after_next && req.type != op::ping) {
            // Applied, and its reply never sent: the client cannot tell.
            drop_after_next = false;
            the_net->w->note("fault: connection of session " + std::to_string(r.session) +
                             " closed after the server applied a request, before its reply");
            return lose_connection_now();
        }
        deliver(message{0, c, kind::reply, r.xid, std::move(reply)});
    }
    void flush() {
        while (!unsent.empty()) {
            auto r = std::move(unsent.front());
            unsent.pop_front();
            send(std::move(r));
        }
    }
    void start_connect() {
        conn = ++connections;
        handshaking = true;
        const int servers = the_net->server->servers();
        if (the_net->route >= 0 && the_net->route < servers) server = the_net->route;
        else server = servers > 1 ? static_cast<int>(the_net->w->uniform(0, servers - 1)) : 0;
        const int to = server;
        handshake_deadline = local() + zklock::sim::ms(requested_timeout) * 2 / 3;
        const auto c = conn;
        const nanos arrive = std::max(up_last, the_net->w->now() + latency());
        up_last = arrive;
        zhandle_t* self = this;
        const int f = fd;
        the_net->w->at(arrive, -1, [self, f, c, to] {
            if (!the_net->by_fd.count(f) || the_net->by_fd.at(f) != self || self->conn != c) return;
            if (the_net->w->now() < self->partitioned_until) return;  // the client gives up on this handshake
            auto& zk = *the_net->server;
            if (self->cid.client_id == 0) {
                int negotiated = 0;
                self->cid.client_id = zk.open_session(self->requested_timeout, negotiated);
                self->negotiated = negotiated;
                the_net->by_session[self->cid.client_id] = self;
            }
            if (!zk.alive(self->cid.client_id)) {
                self->deliver(message{0, c, kind::expired});
                return;
            }
            // A server behind what the client has seen refuses it (the
            // client's ConnectRequest carries its last zxid).
            if (zk.applied(to) < self->last_zxid) {
                if (the_net->w->verbose)
                    the_net->w->note("server " + std::to_string(to) + " refuses session " +
                                     std::to_string(self->cid.client_id) + ": it saw zxid " +
                                     std::to_string(self->last_zxid) + ", the server applied " +
                                     std::to_string(zk.applied(to)));
                self->deliver(message{0, c, kind::lost});
                return;
            }
            zk.attach(self->cid.client_id, to, self->last_zxid);
            self->accepted_conn = c;
            self->accepted_server = to;
            if (the_net->w->verbose && zk.servers() > 1)
                the_net->w->note("session " + std::to_string(self->cid.client_id) + " connected to server " +
                                 std::to_string(to));
            zk.touch(self->cid.client_id);
            self->deliver(message{0, c, kind::connected});
        });
    }
    void fail_all(int rc) {
        auto s = std::move(sent);
        sent.clear();
        auto u = std::move(unsent);
        unsent.clear();
        const zk_reply empty{rc};
        for (auto& r : s)
            if (r.done) r.done(rc, empty);
        for (auto& r : u)
            if (r.done) r.done(rc, empty);
    }
    void connection_lost() {
        // The watch events the connection did not bring: the client sets its
        // watches again on the next connection, and the server fires them there.
        for (auto& m : inbound)
            if (m.conn == conn && m.what == kind::event) replay.push_back(std::move(m));
        std::erase_if(inbound, [this](const message& m) { return m.conn == conn; });
        conn = 0;
        handshaking = false;
        state = ZOO_CONNECTING_STATE;
        reconnect_at = local() + the_net->w->uniform(the_net->options.min_reconnect, the_net->options.max_reconnect);
        fail_all(ZCONNECTIONLOSS);
        watcher(this, ZOO_SESSION_EVENT, ZOO_CONNECTING_STATE, "", context);
    }
    void fire_watches(std::map<std::string, std::vector<std::pair<watcher_fn, void*>>>& m, int type,
                      const std::string& path) {
        const auto it = m.find(path);
        if (it == m.end()) return;
        auto ws = std::move(it->second);
        m.erase(it);
        for (auto& [fn, ctx] : ws) fn(this, type, ZOO_CONNECTED_STATE, path.c_str(), ctx);
    }
    void handle(message m) {
        last_recv = local();
        switch (m.what) {
        case kind::connected:
            handshaking = false;
            state = ZOO_CONNECTED_STATE;
            watcher(this, ZOO_SESSION_EVENT, ZOO_CONNECTED_STATE, "", context);
            for (auto& e : std::exchange(replay, {})) {
                e.conn = conn;
                deliver(std::move(e));
            }
            flush();
            return;
        case kind::expired:
            state = ZOO_EXPIRED_SESSION_STATE;
            conn = 0;
            fail_all(ZSESSIONEXPIRED);
            watcher(this, ZOO_SESSION_EVENT, ZOO_EXPIRED_SESSION_STATE, "", context);
            return;
        case kind::lost:
            if (the_net->w->verbose) the_net->w->note("client of session " + std::to_string(cid.client_id) + ": connection lost");
            connection_lost();
            return;
        case kind::event:
            if (the_net->w->verbose)
                the_net->w->note("client of session " + std::to_string(cid.client_id) + ": event " +
                                 std::to_string(m.type) + " " + m.path);
            if (m.type == ZOO_CHILD_EVENT) fire_watches(child_w, m.type, m.path);
            else {
                fire_watches(data_w, m.type, m.path);
                fire_watches(exist_w, m.type, m.path);
                if (m.type == ZOO_DELETED_EVENT) fire_watches(child_w, m.type, m.path);
            }
            return;
        case kind::reply: {
            if (sent.empty() || sent.front().xid != m.xid) {
                // Both directions are FIFO: a reply out of order is the simulator's fault.
                the_net->w->model_error("a reply out of order on session " + std::to_string(cid.client_id));
                return;
            }
            auto r = std::move(sent.front());
            sent.pop_front();
            const int rc = m.reply.rc;
            // As the real client: pings' (and events') zxids are not taken.
            if (r.req.type != op::ping) last_zxid = std::max(last_zxid, m.reply.zxid);
            if (r.watcher) {
                const bool set = rc == ZOK || (r.req.type == op::exists && rc == ZNONODE);
                if (set) {
                    auto& table = r.req.type == op::get_children ? child_w
                                  : (r.req.type == op::exists ? exist_w : data_w);
                    table[r.req.path].emplace_back(r.watcher, r.watcher_ctx);
                }
            }
            if (r.done) r.done(rc, m.reply);
            return;
        }
        }
    }
    bool has_due() const {
        return !inbound.empty() && inbound.front().at <= the_net->w->now();
    }
    void process_due() {
        while (has_due() && state != ZOO_EXPIRED_SESSION_STATE) {
            auto m = std::move(inbound.front());
            inbound.pop_front();
            if (m.conn != conn) continue;
            handle(std::move(m));
        }
        if (state == ZOO_EXPIRED_SESSION_STATE) return;
        const nanos now = local();
        if (conn && !handshaking && now - last_recv >= zklock::sim::ms(negotiated) * 2 / 3) {
            the_net->w->note("client of session " + std::to_string(cid.client_id) + " heard nothing for 2/3 of its timeout");
            connection_lost();
        } else if (conn && handshaking && now >= handshake_deadline) {
            connection_lost();
        }
        if (!conn && now >= reconnect_at) start_connect();
        if (state == ZOO_CONNECTED_STATE && now - last_send >= zklock::sim::ms(negotiated) / 3)
            send(sent_request{0, zk_request{op::ping}, nullptr});
    }
    nanos next_deadline() const {
        if (state == ZOO_EXPIRED_SESSION_STATE) return local() + zklock::sim::ms(1000);
        if (!conn) return reconnect_at;
        if (handshaking) return handshake_deadline;
        const nanos ping = last_send + zklock::sim::ms(negotiated) / 3;
        const nanos silent = last_recv + zklock::sim::ms(negotiated) * 2 / 3;
        return std::min(ping, silent);
    }
    int submit(zk_request req, completion done, watcher_fn w = nullptr, void* wctx = nullptr) {
        if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) return ZINVALIDSTATE;
        unsent.push_back(sent_request{0, std::move(req), std::move(done), w, wctx});
        if (state == ZOO_CONNECTED_STATE) flush();
        return ZOK;
    }
};

namespace zklock::sim {

void attach_network(world& w, zk_server& server, network_options options) {
    the_net = new net{&w, &server, options, {}, {}, -1};
    w.has_input = [](int fd) {
        const auto it = the_net->by_fd.find(fd);
        return it != the_net->by_fd.end() && it->second->has_due();
    };
    server.on_event = [](std::int64_t session, int type, const std::string& path) {
        const auto it = the_net->by_session.find(session);
        if (it == the_net->by_session.end()) return;
        auto* h = it->second;
        _zhandle::message m{0, h->conn, _zhandle::kind::event};
        m.type = type;
        m.path = path;
        // While disconnected, the event waits for the next connection (the
        // client sets its watches again there and the server fires them).
        if (!h->conn || h->handshaking) h->replay.push_back(std::move(m));
        else h->deliver(std::move(m));
    };
    server.on_expired = [](std::int64_t session) {
        const auto it = the_net->by_session.find(session);
        if (it != the_net->by_session.end()) it->second->lose_connection_now();
    };
}

void detach_network() {
    delete the_net;
    the_net = nullptr;
}

void drop_connection(std::int64_t session) {
    const auto it = the_net->by_session.find(session);
    if (it != the_net->by_session.end()) it->second->lose_connection_now();
}

void partition(std::int64_t session, nanos until) {
    const auto it = the_net->by_session.find(session);
    // Partitions that overlap make one: a later one never shortens an earlier.
    if (it != the_net->by_session.end()) it->second->partitioned_until = std::max(it->second->partitioned_until, until);
}

void drop_after_next_request(std::int64_t session) {
    const auto it = the_net->by_session.find(session);
    if (it != the_net->by_session.end()) it->second->drop_after_next = true;
}

void route_connections(int server) { the_net->route = server; }

} // namespace zklock::sim

// ---- the C API ------------------------------------------------------------------

namespace {

void copy_stat(const zk_reply& r, Stat* out) { *out = r.stat; }

} // namespace

extern "C" {

zhandle_t* zookeeper_init2(const char*, watcher_fn fn, int recv_timeout, const clientid_t*, void* context, int,
                           log_callback_fn log) {
    if (!the_net) return nullptr;
    auto* h = new _zhandle;
    h->process = the_net->w->current();
    h->watcher = fn;
    h->context = context;
    h->log = log;
    h->requested_timeout = recv_timeout;
    h->fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // a descriptor the session may fstat; never read
    the_net->by_fd[h->fd] = h;
    h->start_connect();
    return h;
}

zhandle_t* zookeeper_init(const char* host, watcher_fn fn, int recv_timeout, const clientid_t* id, void* context,
                          int flags) {
    return zookeeper_init2(host, fn, recv_timeout, id, context, flags, nullptr);
}

int zookeeper_close(zhandle_t* zh) {
    if (!zh) return ZBADARGUMENTS;
    if (zh->state == ZOO_CONNECTED_STATE) {
        const auto session = zh->cid.client_id;
        the_net->w->at(std::max(zh->up_last, std::max(the_net->w->now(), zh->partitioned_until) + latency()), -1,
                       [session] { the_net->server->close_session(session); });
    }
    the_net->by_fd.erase(zh->fd);
    if (zh->cid.client_id) the_net->by_session.erase(zh->cid.client_id);
    the_net->w->cancel_readable(zh->fd);
    zh->fail_all(ZCLOSING);
    ::close(zh->fd);
    delete zh;
    return ZOK;
}

int zookeeper_interest(zhandle_t* zh, int* fd, int* interest, struct timeval* tv) {
    *fd = zh->fd;
    *interest = ZOOKEEPER_READ;
    const nanos left = std::max<nanos>(0, zh->next_deadline() - zh->local());
    const nanos us = (left + 999) / 1000;
    tv->tv_sec = us / 1'000'000;
    tv->tv_usec = us % 1'000'000;
    if (zh->state == ZOO_EXPIRED_SESSION_STATE) return ZINVALIDSTATE;
    return zh->conn && !zh->handshaking ? ZOK : ZCONNECTIONLOSS;
}

int zookeeper_process(zhandle_t* zh, int) {
    if (zh->state == ZOO_EXPIRED_SESSION_STATE) return ZINVALIDSTATE;
    zh->process_due();
    return ZOK;
}

int zoo_state(zhandle_t* zh) { return zh ? zh->state : 0; }
const clientid_t* zoo_client_id(zhandle_t* zh) { return &zh->cid; }
int zoo_recv_timeout(zhandle_t* zh) { return zh->negotiated; }
const void* zoo_get_context(zhandle_t* zh) { return zh->context; }
void zoo_set_context(zhandle_t* zh, void* context) { zh->context = context; }
int zoo_set_servers_resolution_delay(zhandle_t*, int) { return ZOK; }
// The simulated client picks each connection's server itself: the Session
// never steers the rotation here.
void zoo_cycle_next_server(zhandle_t*) {}
const char* zoo_get_current_server(zhandle_t* zh) {
    static const char* names[] = {"sim:2181", "sim:2182", "sim:2183"};
    return names[zh->server % 3];
}
void zoo_set_debug_level(ZooLogLevel) {}
void zoo_set_log_stream(FILE*) {}
int is_unrecoverable(zhandle_t* zh) { return zh->state == ZOO_EXPIRED_SESSION_STATE ? ZINVALIDSTATE : ZOK; }

const char* zerror(int c) {
    switch (c) {
    case ZOK: return "ok";
    case ZCONNECTIONLOSS: return "connection loss";
    case ZSESSIONEXPIRED: return "session expired";
    case ZNONODE: return "no node";
    case ZNODEEXISTS: return "node exists";
    case ZCLOSING: return "zookeeper is closing";
    default: return "error";
    }
}

int zoo_add_auth(zhandle_t* zh, const char*, const char*, int, void_completion_t completion, const void* data) {
    return zh->submit(zk_request{op::ping}, [completion, data](int rc, const zk_reply&) {
        if (completion) completion(rc, data);
    });
}

int zoo_acreate2(zhandle_t* zh, const char* path, const char* value, int valuelen, const struct ACL_vector*, int mode,
                 string_stat_completion_t completion, const void* data) {
    zk_request r{op::create, path, std::string(value ? value : "", value ? static_cast<std::size_t>(valuelen) : 0), mode};
    return zh->submit(std::move(r), [completion, data](int rc, const zk_reply& rep) {
        Stat st = rep.stat;
        completion(rc, rc == ZOK ? rep.name.c_str() : nullptr, rc == ZOK ? &st : nullptr, data);
    });
}

int zoo_adelete(zhandle_t* zh, const char* path, int version, void_completion_t completion, const void* data) {
    zk_request r{op::remove, path};
    r.version = version;
    return zh->submit(std::move(r), [completion, data](int rc, const zk_reply&) { completion(rc, data); });
}

static int exists_impl(zhandle_t* zh, const char* path, watcher_fn w, void* wctx, bool watch,
                       stat_completion_t completion, const void* data) {
    zk_request r{op::exists, path};
    r.watch = watch;
    return zh->submit(
        std::move(r),
        [completion, data](int rc, const zk_reply& rep) {
            Stat st = rep.stat;
            completion(rc, rc == ZOK ? &st : nullptr, data);
        },
        watch ? w : nullptr, wctx);
}

int zoo_aexists(zhandle_t* zh, const char* path, int watch, stat_completion_t completion, const void* data) {
    return exists_impl(zh, path, zh->watcher, zh->context, watch != 0, completion, data);
}

int zoo_awexists(zhandle_t* zh, const char* path, watcher_fn w, void* wctx, stat_completion_t completion,
                 const void* data) {
    return exists_impl(zh, path, w, wctx, w != nullptr, completion, data);
}

static int get_impl(zhandle_t* zh, const char* path, watcher_fn w, void* wctx, bool watch,
                    data_completion_t completion, const void* data) {
    zk_request r{op::get_data, path};
    r.watch = watch;
    return zh->submit(
        std::move(r),
        [completion, data](int rc, const zk_reply& rep) {
            Stat st = rep.stat;
            completion(rc, rc == ZOK ? rep.data.data() : nullptr, rc == ZOK ? static_cast<int>(rep.data.size()) : -1,
                       rc == ZOK ? &st : nullptr, data);
        },
        watch ? w : nullptr, wctx);
}

int zoo_aget(zhandle_t* zh, const char* path, int watch, data_completion_t completion, const void* data) {
    return get_impl(zh, path, zh->watcher, zh->context, watch != 0, completion, data);
}

int zoo_awget(zhandle_t* zh, const char* path, watcher_fn w, void* wctx, data_completion_t completion,
              const void* data) {
    return get_impl(zh, path, w, wctx, w != nullptr, completion, data);
}

int zoo_aset(zhandle_t* zh, const char* path, const char* buffer, int buflen, int version,
             stat_completion_t completion, const void* data) {
    zk_request r{op::set_data, path, std::string(buffer ? buffer : "", buffer ? static_cast<std::size_t>(buflen) : 0)};
    r.version = version;
    return zh->submit(std::move(r), [completion, data](int rc, const zk_reply& rep) {
        Stat st = rep.stat;
        completion(rc, rc == ZOK ? &st : nullptr, data);
    });
}

static int children_impl(zhandle_t* zh, const char* path, watcher_fn w, void* wctx, bool watch,
                         strings_completion_t completion, const void* data) {
    zk_request r{op::get_children, path};
    r.watch = watch;
    return zh->submit(
        std::move(r),
        [completion, data](int rc, const zk_reply& rep) {
            std::vector<char*> names;
            for (const auto& c : rep.children) names.push_back(const_cast<char*>(c.c_str()));
            String_vector v{static_cast<std::int32_t>(names.size()), names.data()};
            completion(rc, rc == ZOK ? &v : nullptr, data);
        },
        watch ? w : nullptr, wctx);
}

int zoo_aget_children(zhandle_t* zh, const char* path, int watch, strings_completion_t completion, const void* data) {
    return children_impl(zh, path, zh->watcher, zh->context, watch != 0, completion, data);
}

int zoo_awget_children(zhandle_t* zh, const char* path, watcher_fn w, void* wctx, strings_completion_t completion,
                       const void* data) {
    return children_impl(zh, path, w, wctx, w != nullptr, completion, data);
}

int zoo_async(zhandle_t* zh, const char* path, string_completion_t completion, const void* data) {
    zk_request r{op::sync, path};
    const std::string p = path;
    return zh->submit(std::move(r), [completion, data, p](int rc, const zk_reply&) { completion(rc, p.c_str(), data); });
}

int zoo_aget_acl(zhandle_t* zh, const char* path, acl_completion_t completion, const void* data) {
    zk_request r{op::get_acl, path};
    return zh->submit(std::move(r), [completion, data](int rc, const zk_reply& rep) {
        ACL_vector v = ZOO_OPEN_ACL_UNSAFE;
        Stat st = rep.stat;
        completion(rc, rc == ZOK ? &v : nullptr, rc == ZOK ? &st : nullptr, data);
    });
}

int zoo_aset_acl(zhandle_t* zh, const char* path, int version, struct ACL_vector*, void_completion_t completion,
                 const void* data) {
    zk_request r{op::set_acl, path};
    r.version = version;
    return zh->submit(std::move(r), [completion, data](int rc, const zk_reply&) { completion(rc, data); });
}

int zoo_aremove_all_watches(zhandle_t* zh, const char* path, ZooWatcherType, int, void_completion_t* completion,
                            const void* data) {
    zh->data_w.erase(path);
    zh->exist_w.erase(path);
    zk_request r{op::remove_watches, path};
    auto fn = reinterpret_cast<void_completion_t>(completion);
    return zh->submit(std::move(r), [fn, data](int rc, const zk_reply&) { fn(rc, data); });
}

void zoo_create_op_init(zoo_op_t* op, const char* path, const char* value, int valuelen, const struct ACL_vector* acl,
                        int mode, char* path_buffer, int path_buffer_len) {
    std::memset(op, 0, sizeof *op);
    op->type = ZOO_CREATE_OP;
    op->create_op = {path, value, valuelen, path_buffer, path_buffer_len, acl, mode, -1};
}

void zoo_delete_op_init(zoo_op_t* op, const char* path, int version) {
    std::memset(op, 0, sizeof *op);
    op->type = ZOO_DELETE_OP;
    op->delete_op = {path, version};
}

void zoo_set_op_init(zoo_op_t* op, const char* path, const char* buffer, int buflen, int version, struct Stat* stat) {
    std::memset(op, 0, sizeof *op);
    op->type = ZOO_SETDATA_OP;
    op->set_op = {path, buffer, buflen, version, stat};
}

void zoo_check_op_init(zoo_op_t* op, const char* path, int version) {
    std::memset(op, 0, sizeof *op);
    op->type = ZOO_CHECK_OP;
    op->check_op = {path, version};
}

int zoo_amulti(zhandle_t* zh, int count, const zoo_op_t* ops, zoo_op_result_t* results, void_completion_t completion,
               const void* data) {
    zk_request r{op::multi};
    std::vector<std::pair<char*, int>> bufs;
    for (int i = 0; i < count; ++i) {
        const auto& o = ops[i];
        zk_request s;
        switch (o.type) {
        case ZOO_CREATE_OP:
            s.type = op::create;
            s.path = o.create_op.path;
            s.data.assign(o.create_op.data ? o.create_op.data : "",
                          o.create_op.data ? static_cast<std::size_t>(o.create_op.datalen) : 0);
            s.flags = o.create_op.flags;
            bufs.emplace_back(o.create_op.buf, o.create_op.buflen);
            break;
        case ZOO_DELETE_OP:
            s.type = op::remove;
            s.path = o.delete_op.path;
            s.version = o.delete_op.version;
            bufs.emplace_back(nullptr, 0);
            break;
        case ZOO_SETDATA_OP:
            s.type = op::set_data;
            s.path = o.set_op.path;
            s.data.assign(o.set_op.data ? o.set_op.data : "", o.set_op.data ? static_cast<std::size_t>(o.set_op.datalen) : 0);
            s.version = o.set_op.version;
            bufs.emplace_back(nullptr, 0);
            break;
        default:
            s.type = op::check;
            s.path = o.check_op.path;
            s.version = o.check_op.version;
            bufs.emplace_back(nullptr, 0);
            break;
        }
        r.ops.push_back(std::move(s));
    }
    return zh->submit(std::move(r), [completion, data, results, bufs, count](int rc, const zk_reply& rep) {
        if (rc == ZOK || !rep.op_rc.empty()) {
            for (int i = 0; i < count && static_cast<std::size_t>(i) < rep.op_rc.size(); ++i) {
                results[i].err = rep.op_rc[i];
                if (bufs[i].first && bufs[i].second > 0 && rc == ZOK) {
                    std::strncpy(bufs[i].first, rep.op_name[i].c_str(), static_cast<std::size_t>(bufs[i].second) - 1);
                    bufs[i].first[bufs[i].second - 1] = '\0';
                }
            }
        }
        completion(rc, data);
    });
}

} // extern "C"
