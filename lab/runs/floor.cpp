// The floor of the uncontended lock cycle: the leanest loop the ZooKeeper C
// client can run against the same server, with nothing of zklock in it (no
// Asio, no second thread, no strand, no allocation of ours per request). Each
// cycle pipelines, in one write: the delete of the previous cycle's node, the
// create of a new EPHEMERAL_SEQUENTIAL node, and the getChildren that shows
// the node is first; the cycle ends with the getChildren reply. That is what
// a lock() + unlock() costs at least on the wire: one round trip.
//
// The handoff floor (run_handoff_floor) is the contended counterpart: K
// handles on one lock, driven from one thread. A waiter watches its
// predecessor (exists) and takes the deletion as its grant, which holds only
// because in this loop nobody leaves the queue but a holder; a holder releases
// at once (delete, then create and getChildren for its next turn, pipelined).
// With release_proof it releases as a Mutex does (the transaction that creates
// and deletes the node's `.released` sibling, writes the node and deletes it)
// and a waiter holds on the sibling's creation, as a Mutex's waiter does.
//
// With requeue both floors put a release and the next create in one multi
// (floor_options::requeue): one transaction per cycle instead of two.
//
// The many-locks floor (run_locks_floor) is the burst of `zklock bench
// --scenario locks` on one handle: every lock's requests in flight together,
// so it gives the most that pipelining on this server can gain over one cycle.
#include "runs/floor.hpp"

#include "bench.hpp"
#include "runs/client_schedule.hpp"

#include <zklock/error.hpp>

#include <zookeeper.h>

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace zklock::cli {
namespace {

// The release proof's sibling, as a Mutex names it: the wire format is stated
// once, in docs/design.md ("The handoff without a listing"); the floor writes
// it against the C client as any other client of the protocol would.
std::string release_proof_path(const std::string& node_path) { return node_path + ".released"; }

using clock_type = std::chrono::steady_clock;

struct loop_state {
    bool connected = false;
    bool dead = false;          // expired, auth failed
    int pending = 0;            // replies of this cycle not yet in
    int failure = ZOK;          // first failed reply
    std::string created;        // the node this cycle created
};

void watcher(zhandle_t*, int type, int state, const char*, void* ctx) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* s = static_cast<loop_state*>(ctx);
    if (state == ZOO_CONNECTED_STATE) s->connected = true;
    if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) s->dead = true;
}

void note(loop_state* s, int rc) {
    --s->pending;
    if (rc != ZOK && s->failure == ZOK) s->failure = rc;
}

// Drives the single-threaded handles until `done()` or `deadline`; false when
// a session died or time ran out.
template <class Done>
bool drive_all(const std::vector<zhandle_t*>& zhs, const std::vector<const loop_state*>& states, Done done,
               clock_type::time_point deadline) {
    std::vector<pollfd> fds(zhs.size());
    while (!done()) {
        if (clock_type::now() >= deadline) return false;
        long wait_ms = 100;
        for (std::size_t i = 0; i < zhs.size(); ++i) {
            if (states[i]->dead) return false;
            int fd = -1, interest = 0;
            timeval tv{};
            if (const int rc = zookeeper_interest(zhs[i], &fd, &interest, &tv); rc != ZOK && rc != ZCONNECTIONLOSS)
                return false;
            fds[i] = pollfd{fd, 0, 0};
            if (interest & ZOOKEEPER_READ) fds[i].events |= POLLIN;
            if (interest & ZOOKEEPER_WRITE) fds[i].events |= POLLOUT;
            wait_ms = std::min(wait_ms, static_cast<long>(tv.tv_sec * 1000 + tv.tv_usec / 1000));
        }
        ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms));
        for (std::size_t i = 0; i < zhs.size(); ++i) {
            int events = 0;
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) events |= ZOOKEEPER_READ;
            if (fds[i].revents & POLLOUT) events |= ZOOKEEPER_WRITE;
            zookeeper_process(zhs[i], events);
        }
    }
    return true;
}

template <class Done> bool drive(zhandle_t* zh, const loop_state& st, Done done, clock_type::time_point deadline) {
    return drive_all({zh}, {&st}, done, deadline);
}

struct handle {
    zhandle_t* zh = nullptr;
    ~handle() {
        if (zh) zookeeper_close(zh);
    }
};

// A handle connected to `connect` with `auth`; its session events go to `st`.
void open_handle(handle& h, loop_state& st, const std::string& connect, const std::vector<auth_entry>& auth) {
    // The loop reports its failures itself: the C client's lines are dropped.
    h.zh = zookeeper_init2(connect.c_str(), watcher, 10000, nullptr, &st, 0, [](const char*) {});
    if (!h.zh) throw error(make_error_code(errc::invalid_argument), "bench floor: zookeeper_init failed");
    zoo_set_servers_resolution_delay(h.zh, -1);  // as zklock's Session: no DNS per event-loop turn
    for (const auto& a : auth)
        zoo_add_auth(h.zh, a.scheme.c_str(), a.credentials.data(), static_cast<int>(a.credentials.size()), nullptr,
                     nullptr);
    if (!drive(h.zh, st, [&] { return st.connected; }, clock_type::now() + std::chrono::seconds(30)))
        throw error(make_error_code(errc::timeout), "bench floor: could not connect to " + connect);
}

void on_dir_created(int rc, const char*, const Stat*, const void* d) {
    note(static_cast<loop_state*>(const_cast<void*>(d)), rc == ZNODEEXISTS ? ZOK : rc);
}

void on_listed(int rc, const String_vector*, const void* d) {
    note(static_cast<loop_state*>(const_cast<void*>(d)), rc);
}

// Drives the handle until every reply is in. Empty when all came back well;
// otherwise the first failure's code, or a timeout's when `deadline` passed.
std::error_code replies_failed(zhandle_t* zh, loop_state& st, clock_type::time_point deadline) {
    if (drive(zh, st, [&] { return st.pending == 0; }, deadline) && st.failure == ZOK) return {};
    return from_zookeeper(st.failure == ZOK ? ZOPERATIONTIMEOUT : st.failure);
}

// The lock directory (and its parents), as containers.
void create_dir(zhandle_t* zh, loop_state& st, const std::string& dir, ACL_vector* acl) {
    std::string prefix;
    for (std::size_t at = 1; at <= dir.size(); ++at) {
        if (at != dir.size() && dir[at] != '/') continue;
        prefix = dir.substr(0, at);
        ++st.pending;
        zoo_acreate2(zh, prefix.c_str(), "", 0, acl, ZOO_CONTAINER, on_dir_created, &st);
    }
    if (const auto ec = replies_failed(zh, st, clock_type::now() + std::chrono::seconds(30)))
        throw error(ec, "bench floor: could not create " + dir);
}

// The ACL of the floors' nodes: creator-all once the handle has credentials.
ACL_vector* acl_for(const floor_options& o) { return o.auth.empty() ? &ZOO_OPEN_ACL_UNSAFE : &ZOO_CREATOR_ALL_ACL; }

// One handle connected, its lock directory made; returns the nodes' ACL.
ACL_vector* open_with_dir(handle& h, loop_state& st, const floor_options& o) {
    open_handle(h, st, o.connect, o.auth);
    create_dir(h.zh, st, o.dir, acl_for(o));
    return acl_for(o);
}

// A name as long as zklock's (`_c_<uuid>-lock-`).
std::string node_prefix(const std::string& dir) { return dir + "/_c_00000000-0000-4000-8000-000000000000-lock-"; }

// A cycle's release and next create in one transaction (floor_options::requeue):
// its ops, results and the created name's buffer outlive the handle, which
// may still answer it as it closes.
struct requeue_txn {
    zoo_op_t ops[2] = {};
    zoo_op_result_t results[2] = {};
    char created[512] = {};
    loop_state* st = nullptr;
};

}  // namespace

floor_result run_floor(const floor_options& o) {
    loop_state st;
    requeue_txn txn;
    txn.st = &st;
    handle h;
    ACL_vector* acl = open_with_dir(h, st, o);

    const std::string prefix = node_prefix(o.dir);
    std::string previous;  // the node to delete in the next cycle
    floor_result r;
    r.samples_us.reserve(static_cast<std::size_t>(o.ops));
    const auto created = [](int rc, const char* name, const Stat*, const void* d) {
        auto* s = static_cast<loop_state*>(const_cast<void*>(d));
        if (rc == ZOK && name) s->created = name;
        note(s, rc);
    };
    const auto deleted = [](int rc, const void* d) {
        note(static_cast<loop_state*>(const_cast<void*>(d)), rc == ZNONODE ? ZOK : rc);
    };
    // The node's create and the listing behind it, sent together.
    const auto create_and_list = [&] {
        st.pending += 2;
        st.created.clear();
        zoo_acreate2(h.zh, prefix.c_str(), "", 0, acl, ZOO_EPHEMERAL_SEQUENTIAL, created, &st);
        zoo_aget_children(h.zh, o.dir.c_str(), 0, on_listed, &st);
    };
    // requeue: the delete and the create in one multi, the listing behind it.
    const auto requeue_and_list = [&] {
        st.pending += 2;
        st.created.clear();
        zoo_delete_op_init(&txn.ops[0], previous.c_str(), -1);
        zoo_create_op_init(&txn.ops[1], prefix.c_str(), "", 0, acl, ZOO_EPHEMERAL_SEQUENTIAL, txn.created,
                           sizeof txn.created);
        zoo_amulti(h.zh, 2, txn.ops, txn.results, [](int rc, const void* d) {
            auto* t = static_cast<requeue_txn*>(const_cast<void*>(d));
            if (rc == ZOK) t->st->created = t->created;
            note(t->st, rc);
        }, &txn);
        zoo_aget_children(h.zh, o.dir.c_str(), 0, on_listed, &st);
    };
    if (o.warmup == 0 && o.on_measuring) o.on_measuring();
    auto schedule_from = read_process_schedule();  // read outside the measured wall time
    auto measured_from = clock_type::now();
    for (int i = 0; i < o.warmup + o.ops; ++i) {
        const auto t0 = clock_type::now();
        const auto deadline = t0 + std::chrono::seconds(30);
        st.pending = 0;
        if (o.requeue && !previous.empty()) {
            requeue_and_list();
        } else {
            if (!previous.empty()) {
                ++st.pending;
                zoo_adelete(h.zh, previous.c_str(), -1, deleted, &st);
            }
            create_and_list();
        }
        auto ec = replies_failed(h.zh, st, deadline);
        if (st.pending == 0 && st.failure == ZNONODE && st.created.empty()) {
            // The directory is a container: the server may reap it in the moment
            // between the delete and the create, which then finds no parent. As a
            // Mutex does, make it again and create the node once more; the cycle
            // counts the round trips that took.
            st.failure = ZOK;
            create_dir(h.zh, st, o.dir, acl);
            create_and_list();
            ec = replies_failed(h.zh, st, deadline);
        }
        if (ec) throw error(ec, "bench floor: cycle failed");
        previous = st.created;
        if (i >= o.warmup) r.samples_us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
        if (i + 1 == o.warmup) {
            if (o.on_measuring) o.on_measuring();
            schedule_from = read_process_schedule();
            measured_from = clock_type::now();
        }
    }
    r.wall_s = std::chrono::duration<double>(clock_type::now() - measured_from).count();
    r.client_schedule = schedule_per_cycle(schedule_from, read_process_schedule(), static_cast<std::uint64_t>(o.ops));
    if (!previous.empty()) {
        st.pending = 1;
        zoo_adelete(h.zh, previous.c_str(), -1, deleted, &st);
        drive(h.zh, st, [&] { return st.pending == 0; }, clock_type::now() + std::chrono::seconds(10));
    }
    return r;
}


namespace {

// One client of the handoff floor.
struct floor_client {
    struct handoff_run* run = nullptr;
    zhandle_t* zh = nullptr;
    loop_state session;
    std::string node;  // our node in the queue (full path); empty from our grant until the next create's answer
    clock_type::time_point enqueued;
};

// One release transaction (release_proof, requeue): its ops' strings, results
// and the next node's name live until its completion.
struct release_txn {
    floor_client* client = nullptr;
    bool requeue = false;  // the last op creates the client's next node
    std::string node, sibling;
    char sibling_created[1] = {};
    char created[512] = {};
    zoo_op_t ops[5] = {};
    zoo_op_result_t results[5] = {};
};

struct handoff_run {
    std::string dir, prefix;
    ACL_vector* acl = nullptr;
    bool release_proof = false;
    bool requeue = false;
    int grants = 0, total = 0, warmup = 0;
    int failure = ZOK;
    bool released = false;  // a holder has released since the first grant
    clock_type::time_point last_release, measured_from;
    process_schedule schedule_from;  // the thread's, read as the measured grants begin
    std::function<void()> on_measuring;
    std::vector<double> acquire_us, handoff_us;
};

void fail(handoff_run* r, int rc) {
    if (r->failure == ZOK) r->failure = rc;
}

void enqueue(floor_client* c);
void send_listing(floor_client* c);

// Our turn: count it, release at once and queue again (one write: delete,
// create, getChildren; requeue: the delete and the create in one multi),
// unless the run is over.
void grant(floor_client* c) {
    auto* r = c->run;
    const auto now = clock_type::now();
    if (r->grants >= r->total) return;
    if (r->grants == r->warmup) {
        if (r->on_measuring) r->on_measuring();
        r->schedule_from = read_process_schedule();
        r->measured_from = clock_type::now();  // after the reading, which is not the grants' time
    }
    if (r->grants >= r->warmup) {
        r->acquire_us.push_back(std::chrono::duration<double, std::micro>(now - c->enqueued).count());
        if (r->released) r->handoff_us.push_back(std::chrono::duration<double, std::micro>(now - r->last_release).count());
    }
    ++r->grants;
    r->released = true;
    r->last_release = clock_type::now();
    const bool requeue = r->requeue && r->grants < r->total;
    if (requeue) c->enqueued = clock_type::now();  // queued by the multi sent next, as enqueue() times its create
    if (r->release_proof || requeue) {
        auto* t = new release_txn;
        t->client = c;
        t->requeue = requeue;
        t->node = c->node;
        int n = 0;
        if (r->release_proof) {
            t->sibling = release_proof_path(c->node);
            zoo_create_op_init(&t->ops[n++], t->sibling.c_str(), nullptr, -1, r->acl, ZOO_EPHEMERAL, t->sibling_created,
                               sizeof t->sibling_created);
            zoo_delete_op_init(&t->ops[n++], t->sibling.c_str(), -1);
            zoo_set_op_init(&t->ops[n++], t->node.c_str(), "", 0, -1, nullptr);
        }
        zoo_delete_op_init(&t->ops[n++], t->node.c_str(), -1);
        if (requeue)
            zoo_create_op_init(&t->ops[n++], r->prefix.c_str(), "", 0, r->acl, ZOO_EPHEMERAL_SEQUENTIAL, t->created,
                               sizeof t->created);
        zoo_amulti(c->zh, n, t->ops, t->results, [](int rc, const void* d) {
            auto* t = static_cast<release_txn*>(const_cast<void*>(d));
            if (rc != ZOK) fail(t->client->run, rc);
            else if (t->requeue) t->client->node = t->created;
            delete t;
        }, t);
    } else {
        zoo_adelete(c->zh, c->node.c_str(), -1, [](int rc, const void* d) {
            if (rc != ZOK) fail(static_cast<floor_client*>(const_cast<void*>(d))->run, rc);
        }, c);
    }
    c->node.clear();
    if (requeue) {
        send_listing(c);  // answered after the multi, which names our node
    } else if (r->grants < r->total) {
        enqueue(c);
    }
}

// The first of the ways to a turn's grant; a later one finds it granted. The
// answer to a granted turn's getData can come after that grant (the sibling's
// creation came first), and after it queued us again: our node is not known
// then, since the server answers a session's requests in order.
void grant_once(floor_client* c) {
    if (c->node.empty()) return;
    grant(c);
}

void predecessor_watch(zhandle_t*, int type, int, const char*, void* ctx) {
    if (type == ZOO_DELETED_EVENT) grant_once(static_cast<floor_client*>(ctx));
}

// release_proof: the predecessor's data change and deletion come in the
// transaction whose sibling creation granted us already.
void ignored_watch(zhandle_t*, int, int, const char*, void*) {}

void sibling_watch(zhandle_t*, int type, int, const char*, void* ctx) {
    if (type == ZOO_CREATED_EVENT) grant_once(static_cast<floor_client*>(ctx));
}

// The answer to the watch on the predecessor.
void predecessor_gone(int rc, const void* d) {
    auto* c = static_cast<floor_client*>(const_cast<void*>(d));
    if (rc == ZNONODE) grant_once(c);  // gone already: it held and released (nobody else leaves)
    else if (rc != ZOK) fail(c->run, rc);
}

void enqueue(floor_client* c) {
    c->enqueued = clock_type::now();
    zoo_acreate2(c->zh, c->run->prefix.c_str(), "", 0, c->run->acl, ZOO_EPHEMERAL_SEQUENTIAL,
                 [](int rc, const char* name, const Stat*, const void* d) {
                     auto* c = static_cast<floor_client*>(const_cast<void*>(d));
                     if (rc == ZOK && name) c->node = name;
                     else fail(c->run, rc);
                 },
                 c);
    send_listing(c);
}

// Sent with the create, answered after it: the listing shows our node.
void send_listing(floor_client* c) {
    zoo_aget_children(c->zh, c->run->dir.c_str(), 0, [](int rc, const String_vector* children, const void* d) {
        auto* c = static_cast<floor_client*>(const_cast<void*>(d));
        if (rc != ZOK || c->node.empty()) return fail(c->run, rc == ZOK ? ZNONODE : rc);
        std::vector<std::string> names(children->data, children->data + children->count);
        std::sort(names.begin(), names.end());  // one prefix, zero-padded sequence numbers
        const auto own = c->node.substr(c->run->dir.size() + 1);
        const auto at = std::lower_bound(names.begin(), names.end(), own);
        if (at == names.begin()) return grant_once(c);
        const auto predecessor = c->run->dir + "/" + *(at - 1);
        if (!c->run->release_proof) {
            zoo_awexists(c->zh, predecessor.c_str(), predecessor_watch, c,
                         [](int rc, const Stat*, const void* d) { predecessor_gone(rc, d); }, c);
            return;
        }
        // As a Mutex's waiter: the sibling's exists watch and the node's getData
        // watch, sent together.
        const auto sibling = release_proof_path(predecessor);
        zoo_awexists(c->zh, sibling.c_str(), sibling_watch, c, [](int, const Stat*, const void*) {}, c);
        zoo_awget(c->zh, predecessor.c_str(), ignored_watch, c,
                  [](int rc, const char*, int, const Stat*, const void* d) { predecessor_gone(rc, d); }, c);
    }, c);
}

}  // namespace

handoff_floor_result run_handoff_floor(const handoff_floor_options& o) {
    handoff_run run;
    run.dir = o.dir;
    run.prefix = node_prefix(o.dir);
    run.acl = acl_for(o);
    run.release_proof = o.release_proof;
    run.requeue = o.requeue;
    run.warmup = o.warmup;
    run.on_measuring = o.on_measuring;
    run.total = o.warmup + o.ops;
    const auto k = static_cast<std::size_t>(std::max(1, o.clients));
    std::vector<floor_client> clients(k);
    std::vector<handle> handles(k);
    std::vector<zhandle_t*> zhs;
    std::vector<const loop_state*> states;
    for (std::size_t i = 0; i < k; ++i) {
        open_handle(handles[i], clients[i].session, o.connect, o.auth);
        clients[i].run = &run;
        clients[i].zh = handles[i].zh;
        zhs.push_back(handles[i].zh);
        states.push_back(&clients[i].session);
    }
    create_dir(zhs[0], clients[0].session, o.dir, run.acl);
    for (auto& c : clients) enqueue(&c);
    const bool ok = drive_all(zhs, states, [&] { return run.grants >= run.total || run.failure != ZOK; },
                              clock_type::now() + std::chrono::seconds(30) + std::chrono::milliseconds(10) * run.total);
    if (!ok || run.failure != ZOK)
        throw error(from_zookeeper(run.failure == ZOK ? ZOPERATIONTIMEOUT : run.failure), "bench floor: handoff failed");
    handoff_floor_result r;
    r.wall_s = std::chrono::duration<double>(clock_type::now() - run.measured_from).count();
    r.client_schedule = schedule_per_cycle(run.schedule_from, read_process_schedule(), static_cast<std::uint64_t>(o.ops));
    r.acquire_us = std::move(run.acquire_us);
    r.handoff_us = std::move(run.handoff_us);
    return r;  // closing the handles deletes the waiters' nodes
}

namespace {

// One lock of the many-locks floor; the replies find it through the callback's data.
struct floor_lock {
    loop_state* st = nullptr;
    std::string dir;
    std::string prefix;  // of its node's name
    std::string node;
};

void on_created(int rc, const char* name, const Stat*, const void* d) {
    auto* l = static_cast<floor_lock*>(const_cast<void*>(d));
    if (rc == ZOK && name) l->node = name;
    note(l->st, rc);
}

void on_deleted(int rc, const void* d) { note(static_cast<loop_state*>(const_cast<void*>(d)), rc); }

// Waits for every reply of a phase (a minute, and a millisecond per reply);
// throws with `what` when one failed or time ran out.
void finish_phase(zhandle_t* zh, loop_state& st, const char* what) {
    const auto deadline = clock_type::now() + std::chrono::seconds(60) + std::chrono::milliseconds(st.pending);
    if (const auto ec = replies_failed(zh, st, deadline)) throw error(ec, std::string("bench floor: ") + what + " failed");
}

}  // namespace

locks_floor_result run_locks_floor(const locks_floor_options& o) {
    loop_state st;
    handle h;
    ACL_vector* acl = open_with_dir(h, st, o);

    std::vector<floor_lock> locks(static_cast<std::size_t>(std::max(1, o.locks)));
    for (std::size_t i = 0; i < locks.size(); ++i) {
        locks[i].st = &st;
        locks[i].dir = o.dir + "/lock-" + std::to_string(i);
        locks[i].prefix = node_prefix(locks[i].dir);
    }
    locks_floor_result r;
    auto t0 = clock_type::now();
    for (auto& l : locks) {
        st.pending += 3;
        zoo_acreate2(h.zh, l.dir.c_str(), "", 0, acl, ZOO_CONTAINER, on_dir_created, &st);
        zoo_acreate2(h.zh, l.prefix.c_str(), "", 0, acl, ZOO_EPHEMERAL_SEQUENTIAL, on_created, &l);
        zoo_aget_children(h.zh, l.dir.c_str(), 0, on_listed, &st);
    }
    finish_phase(h.zh, st, "taking the locks");
    r.acquire_s = std::chrono::duration<double>(clock_type::now() - t0).count();

    t0 = clock_type::now();
    for (auto& l : locks) {
        ++st.pending;
        zoo_adelete(h.zh, l.node.c_str(), -1, on_deleted, &st);
    }
    finish_phase(h.zh, st, "releasing the locks");
    r.release_s = std::chrono::duration<double>(clock_type::now() - t0).count();

    for (auto& l : locks) {
        ++st.pending;
        zoo_adelete(h.zh, l.dir.c_str(), -1, on_deleted, &st);
    }
    ++st.pending;
    zoo_adelete(h.zh, o.dir.c_str(), -1, on_deleted, &st);
    finish_phase(h.zh, st, "deleting the lock directories");
    return r;
}

}  // namespace zklock::cli
