// The floor of the uncontended lock cycle: the leanest loop the ZooKeeper C
// client can run against the same server, with nothing of zklock in it (no
// Asio, no second thread, no strand, no allocation of ours per request). Each
// cycle pipelines, in one write: the delete of the previous cycle's node, the
// create of a new EPHEMERAL_SEQUENTIAL node, and the getChildren that shows
// the node is first; the cycle ends with the getChildren reply. That is what
// a lock() + unlock() costs at least on the wire: one round trip.
#include "bench_floor.hpp"

#include "bench.hpp"

#include <zklock/error.hpp>

#include <zookeeper.h>

#include <poll.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace zklock::cli {
namespace {

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

// Drives the single-threaded handle until `done()` or `deadline`.
template <class Done> bool drive(zhandle_t* zh, const loop_state& st, Done done, clock_type::time_point deadline) {
    while (!done()) {
        if (st.dead || clock_type::now() >= deadline) return false;
        int fd = -1, interest = 0;
        timeval tv{};
        if (const int rc = zookeeper_interest(zh, &fd, &interest, &tv); rc != ZOK && rc != ZCONNECTIONLOSS) return false;
        pollfd p{fd, 0, 0};
        if (interest & ZOOKEEPER_READ) p.events |= POLLIN;
        if (interest & ZOOKEEPER_WRITE) p.events |= POLLOUT;
        const long ms = tv.tv_sec * 1000 + tv.tv_usec / 1000;
        ::poll(&p, fd >= 0 ? 1 : 0, static_cast<int>(std::min(ms, 100L)));
        int events = 0;
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) events |= ZOOKEEPER_READ;
        if (p.revents & POLLOUT) events |= ZOOKEEPER_WRITE;
        zookeeper_process(zh, events);
    }
    return true;
}

struct handle {
    zhandle_t* zh = nullptr;
    ~handle() {
        if (zh) zookeeper_close(zh);
    }
};

}  // namespace

floor_result run_floor(const floor_options& o) {
    loop_state st;
    handle h;
    // The loop reports its failures itself: the C client's lines are dropped.
    h.zh = zookeeper_init2(o.connect.c_str(), watcher, 10000, nullptr, &st, 0, [](const char*) {});
    if (!h.zh) throw error(make_error_code(errc::invalid_argument), "bench floor: zookeeper_init failed");
    zoo_set_servers_resolution_delay(h.zh, -1);  // as zklock's Session: no DNS per event-loop turn
    for (const auto& a : o.auth)
        zoo_add_auth(h.zh, a.scheme.c_str(), a.credentials.data(), static_cast<int>(a.credentials.size()), nullptr,
                     nullptr);
    const auto deadline = clock_type::now() + std::chrono::seconds(30);
    if (!drive(h.zh, st, [&] { return st.connected; }, deadline))
        throw error(make_error_code(errc::timeout), "bench floor: could not connect to " + o.connect);

    ACL_vector* acl = o.auth.empty() ? &ZOO_OPEN_ACL_UNSAFE : &ZOO_CREATOR_ALL_ACL;
    // The lock directory (and its parents), as containers.
    std::string prefix;
    for (std::size_t at = 1; at <= o.dir.size(); ++at) {
        if (at != o.dir.size() && o.dir[at] != '/') continue;
        prefix = o.dir.substr(0, at);
        ++st.pending;
        zoo_acreate2(h.zh, prefix.c_str(), "", 0, acl, ZOO_CONTAINER,
                     [](int rc, const char*, const Stat*, const void* d) {
                         note(static_cast<loop_state*>(const_cast<void*>(d)), rc == ZNODEEXISTS ? ZOK : rc);
                     },
                     &st);
    }
    if (!drive(h.zh, st, [&] { return st.pending == 0; }, deadline) || st.failure != ZOK)
        throw error(from_zookeeper(st.failure), "bench floor: could not create " + o.dir);

    // A name as long as zklock's (`_c_<uuid>-lock-`).
    const std::string node_prefix = o.dir + "/_c_00000000-0000-4000-8000-000000000000-lock-";
    std::string previous;  // the node to delete in the next cycle
    floor_result r;
    r.samples_us.reserve(static_cast<std::size_t>(o.ops));
    const auto created = [](int rc, const char* name, const Stat*, const void* d) {
        auto* s = static_cast<loop_state*>(const_cast<void*>(d));
        if (rc == ZOK && name) s->created = name;
        note(s, rc);
    };
    const auto listed = [](int rc, const String_vector*, const void* d) {
        note(static_cast<loop_state*>(const_cast<void*>(d)), rc);
    };
    const auto deleted = [](int rc, const void* d) {
        note(static_cast<loop_state*>(const_cast<void*>(d)), rc == ZNONODE ? ZOK : rc);
    };
    auto measured_from = clock_type::now();
    for (int i = 0; i < o.warmup + o.ops; ++i) {
        const auto t0 = clock_type::now();
        st.pending = 0;
        if (!previous.empty()) {
            ++st.pending;
            zoo_adelete(h.zh, previous.c_str(), -1, deleted, &st);
        }
        st.pending += 2;
        zoo_acreate2(h.zh, node_prefix.c_str(), "", 0, acl, ZOO_EPHEMERAL_SEQUENTIAL, created, &st);
        zoo_aget_children(h.zh, o.dir.c_str(), 0, listed, &st);
        if (!drive(h.zh, st, [&] { return st.pending == 0; }, t0 + std::chrono::seconds(30)) || st.failure != ZOK)
            throw error(from_zookeeper(st.failure == ZOK ? ZOPERATIONTIMEOUT : st.failure), "bench floor: cycle failed");
        previous = st.created;
        if (i >= o.warmup) r.samples_us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
        if (i + 1 == o.warmup) measured_from = clock_type::now();
    }
    r.wall_s = std::chrono::duration<double>(clock_type::now() - measured_from).count();
    if (!previous.empty()) {
        st.pending = 1;
        zoo_adelete(h.zh, previous.c_str(), -1, deleted, &st);
        drive(h.zh, st, [&] { return st.pending == 0; }, clock_type::now() + std::chrono::seconds(10));
    }
    return r;
}

}  // namespace zklock::cli
