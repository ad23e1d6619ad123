#include "runner.hpp"

#include "network.hpp"
#include "workload.hpp"
#include "world.hpp"
#include "zk_model.hpp"

#include <zklock/mutex.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/session.hpp>

#include <algorithm>
#include <climits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::sim {
namespace {

/// One lock of the schedule, with the recipe its contenders use.
struct lock_under_test {
    enum class recipe { mutex, semaphore, read_write };
    recipe kind = recipe::mutex;
    std::size_t permits = 1;  // semaphore
    std::string path;
    // FIFO by sequence: the highest sequence granted so far, of any grant and
    // of the exclusive ones (a mutex's, a writer's), in the directory made at
    // zxid dir_czxid (one the server reaped and a contender made again counts
    // from 0 anew).
    std::optional<std::int32_t> last_any, last_exclusive;
    std::int64_t dir_czxid = 0;
};

const char* recipe_name(lock_under_test::recipe r) {
    switch (r) {
    case lock_under_test::recipe::mutex: return "mutex";
    case lock_under_test::recipe::semaphore: return "semaphore";
    case lock_under_test::recipe::read_write: return "read-write lock";
    }
    return "?";
}

struct contender {
    int index = 0;
    int process = 0;
    std::size_t lock = 0;  // which lock_under_test
    bool writer = true;    // read_write: the exclusive side
    std::unique_ptr<Session> session;
    std::unique_ptr<Mutex> mutex_owner;
    std::unique_ptr<Semaphore> semaphore_owner;
    std::unique_ptr<SharedMutex> shared_owner;
    std::optional<QueueLock> permit;
    QueueLock* mutex = nullptr;  // the place in line this contender takes
    int rounds_left = 0;
    bool holding = false;       // granted, unlock not asked yet
    std::int64_t token = 0;
    int losses_reported = 0;
    int reported_at_grant = 0;
    bool awaiting_report = false;  // the library gave the hold up: its report must come
    bool done = false;
};

class schedule {
public:
    schedule(std::uint64_t seed, const sim_options& options) : w_(seed), server_(w_), options_(options) {
        w_.verbose = options.verbose;
        network_options net;
        attach_network(w_, server_, net);
        env_ = std::make_unique<workload_env>(workload_env{w_, server_, stopping_, 0, [this](std::string why) {
                                                                if (pending_failure_.empty())
                                                                    pending_failure_ = std::move(why);
                                                            }});
        server_.on_applied = [this](std::int64_t session, const zk_request& r, const zk_reply& reply) {
            check_own_queue(session, r, reply);
            for (auto& wl : workloads_) wl->applied(session, r, reply);
        };
    }
    ~schedule() {
        // The user's handlers still to come see stopping_ and touch nothing.
        stopping_ = true;
        for (auto& c : contenders_) {
            w_.as(c->process, [&] {
                c->mutex = nullptr;
                c->permit.reset();
                c->mutex_owner.reset();
                c->semaphore_owner.reset();
                c->shared_owner.reset();
                c->session.reset();
            });
            w_.wake(c->process);
        }
        for (auto& wl : workloads_) wl->teardown();
        // The sessions' closes were posted: run them (the C client then fails
        // what is in flight with ZCLOSING, as it does), then end the world.
        w_.run_ready();
        w_.shutdown();
        server_.on_applied = nullptr;
        workloads_.clear();
        contenders_.clear();
        detach_network();
    }

    schedule_result run() {
        schedule_result out;
        // The ensemble: a leader and 0 to 2 followers, each a bounded lag behind.
        const int servers = static_cast<int>(w_.uniform(1, 3));
        for (int i = 1; i < servers; ++i) {
            const auto lag = ms(w_.uniform(0, 400));
            server_.add_follower(lag);
            w_.note("server " + std::to_string(i) + ": a follower up to " + std::to_string(lag / 1'000'000) +
                    " ms behind the leader");
        }
        const int lock_count = static_cast<int>(w_.uniform(1, 3));
        for (int i = 0; i < lock_count; ++i) {
            // The runner's own recipes, or a workload's (tests/sim/workload_*.cpp).
            if (const auto k = w_.uniform(0, 2 + workload_kinds); k > 2) {
                workloads_.push_back(make_workload(static_cast<workload_kind>(k - 3), *env_, i));
                w_.note(workloads_.back()->describe());
                continue;
            }
            lock_under_test l;
            l.kind = static_cast<lock_under_test::recipe>(w_.uniform(0, 2));
            if (l.kind == lock_under_test::recipe::semaphore) l.permits = static_cast<std::size_t>(w_.uniform(2, 3));
            l.path = "/sim/lock" + std::to_string(i);
            w_.note(l.path + ": " + recipe_name(l.kind) +
                    (l.kind == lock_under_test::recipe::semaphore ? " of " + std::to_string(l.permits) : ""));
            locks_.push_back(l);
        }
        if (w_.chance(0.3)) {
            // Lock directories whose counters are about to wrap (signed 32-bit).
            server_.precreate("/sim", 0);
            for (const auto& l : locks_) {
                const auto cv = static_cast<std::int32_t>(INT_MAX - w_.uniform(0, 12));
                server_.precreate(l.path, cv);
                w_.note(l.path + " made with cversion " + std::to_string(cv));
            }
            precreated_ = true;
        }
        const int n = static_cast<int>(w_.uniform(3, 12));
        const int timeout_ms = static_cast<int>(w_.uniform(10, 20) * 100);
        env_->timeout_ms = timeout_ms;
        for (int i = 0; i < n; ++i) add_contender(i, timeout_ms);
        const int faults = static_cast<int>(w_.uniform(1, 5));
        for (int i = 0; i < faults; ++i) schedule_fault(n);
        std::uint64_t steps = 0;
        bool closed = false;
        while (steps < 400'000) {
            if (!w_.step()) break;
            ++steps;
            w_.run_ready();  // what the step's event set off, so that its loss reports have run
            if (!check(out) || !check_workloads(out)) break;
            if (!closed && std::all_of(contenders_.begin(), contenders_.end(), [](auto& c) { return c->done; }) &&
                std::all_of(workloads_.begin(), workloads_.end(), [](auto& wl) { return wl->done(); })) {
                closed = true;
                for (auto& c : contenders_) {
                    w_.as(c->process, [&] { c->session->close(); });
                    w_.wake(c->process);
                }
                for (auto& wl : workloads_) wl->close_sessions();
            }
        }
        out.steps = steps;
        out.grants = grants_;
        if (out.ok && !closed) {
            for (auto& c : contenders_)
                if (c->awaiting_report)
                    fail(out, "c" + std::to_string(c->index) + " was given up and never told its hold was lost");
            fail(out, "the contenders did not finish (" + std::to_string(steps) + " steps)");
        }
        if (out.ok) final_checks(out);
        out.journal = w_.journal();
        return out;
    }

private:
    void fail(schedule_result& out, std::string why) {
        if (!out.ok) return;
        out.ok = false;
        out.failure = std::move(why);
    }

    void add_contender(int i, int timeout_ms) {
        // A slot: one of the runner's locks, or a workload.
        const auto slot = static_cast<std::size_t>(
            w_.uniform(0, static_cast<std::int64_t>(locks_.size() + workloads_.size()) - 1));
        if (slot >= locks_.size()) {
            auto& wl = *workloads_[slot - locks_.size()];
            wl.add(i);
            auto* c = wl.contenders().back();
            targets_.push_back({c->process, &c->session});
            return;
        }
        auto c = std::make_unique<contender>();
        c->index = i;
        c->process = w_.add_process(w_.uniform(-10'000, 10'000));  // up to 1% fast or slow
        c->rounds_left = static_cast<int>(w_.uniform(1, 4));
        c->lock = slot;
        const auto& l = locks_[c->lock];
        c->writer = l.kind != lock_under_test::recipe::read_write || w_.chance(0.4);
        w_.as(c->process, [&] {
            SessionOptions o;
            o.connect = "127.0.0.1:2181";
            o.session_timeout = std::chrono::milliseconds(timeout_ms);
            if (w_.verbose) {
                o.log.level = log_level::debug;
                o.log.callback = [this, i](const log_record& r) {
                    w_.note("c" + std::to_string(i) + " log: " + std::string(r.message));
                };
            }
            c->session = std::make_unique<Session>(w_.io(c->process).get_executor(), o);
            switch (l.kind) {
            case lock_under_test::recipe::mutex:
                c->mutex_owner = std::make_unique<Mutex>(*c->session, l.path);
                c->mutex = c->mutex_owner.get();
                break;
            case lock_under_test::recipe::semaphore:
                c->semaphore_owner = std::make_unique<Semaphore>(*c->session, l.path, l.permits);
                c->permit.emplace(c->semaphore_owner->permit());
                c->mutex = &*c->permit;
                break;
            case lock_under_test::recipe::read_write:
                c->shared_owner = std::make_unique<SharedMutex>(*c->session, l.path);
                c->mutex = c->writer ? &c->shared_owner->writer() : &c->shared_owner->reader();
                break;
            }
            auto* raw = c.get();
            c->mutex->on_lost([this, raw](std::error_code ec) {
                if (stopping_) return;
                ++raw->losses_reported;
                if (raw->awaiting_report) {
                    raw->awaiting_report = false;
                    release(*raw);
                }
                w_.note("c" + std::to_string(raw->index) + " told its hold is lost: " + ec.message());
            });
        });
        w_.wake(c->process);
        auto* raw = c.get();
        targets_.push_back({raw->process, &raw->session});
        contenders_.push_back(std::move(c));
        w_.at(w_.now() + ms(w_.uniform(0, 200)), raw->process, [this, raw] { acquire(*raw); });
    }

    void acquire(contender& c) {
        if (c.rounds_left == 0) {
            c.done = true;
            return;
        }
        --c.rounds_left;
        if (w_.verbose) w_.note("c" + std::to_string(c.index) + " asks for " + locks_[c.lock].path);
        drawn_acquire(w_, c.process, *c.mutex, [this, &c](std::error_code ec) {
            if (stopping_) return;
            if (ec) {
                w_.note("c" + std::to_string(c.index) + " lock failed: " + ec.message());
                w_.at(w_.now() + ms(w_.uniform(1, 100)), c.process, [this, &c] { acquire(c); });
                return;
            }
            on_grant(c);
            w_.at(w_.now() + ms(w_.uniform(1, 400)), c.process, [this, &c] { release(c); });
        });
    }

    void on_grant(contender& c) {
        ++grants_;
        c.holding = true;
        c.reported_at_grant = c.losses_reported;
        c.token = c.mutex->fencing_token();
        w_.note("c" + std::to_string(c.index) + " holds (token " + std::to_string(c.token) + ", session " +
                std::to_string(c.session->session_id()) + ")");
        // No grant while older nodes of live sessions that exclude ours
        // precede it: none for a mutex or a writer, no writer for a reader,
        // fewer than K for a semaphore.
        auto& l = locks_[c.lock];
        const auto who = "c" + std::to_string(c.index);
        // Another client deleted the node while it waited behind others: no
        // grant may follow (the queue went on without it).
        if (deleted_waiting_.count(c.token) && pending_failure_.empty())
            pending_failure_ = who + " granted on a node another client deleted while it waited behind others";
        // Deleted once it was first: the exclusion was broken from outside
        // (the grant may still be on its way); the holder is owed the news
        // (release()), no more.
        if (foreign_deleted_.count(c.token) || deleted_waiting_.count(c.token)) return;
        // FIFO holds for grants with a budget: one on a node the server has
        // already removed (its session expired) must come with none.
        const auto left = c.mutex->safe_for();
        if (const auto node = c.mutex->node_path(); left && left->count() > 0 && !node.empty())
            check_fifo(c, l, sequence_of(node));
        const auto* mine = node_of(c.token);
        if (!mine) return;  // already gone: the loss must be reported
        std::string first;
        const auto ahead = older_live(l, *mine, c.writer, first);
        if (ahead > allowed_ahead(l) && pending_failure_.empty())
            pending_failure_ = who + " granted while " + std::to_string(ahead) + " older nodes of live sessions precede " +
                               *mine + " (" + first + " first)";
    }

    /// No session waits behind a node of its own: a second node made while
    /// its first is still there (a create whose reply was lost, not found
    /// again) waits on it until the session ends. A first node whose delete
    /// is still to go (an unlock retried across a reconnect) may precede the
    /// next acquire's for a while: the library owns that delete, and sends it
    /// once connected; a session that is not connected for a while expires.
    void check_own_queue(std::int64_t session, const zk_request& r, const zk_reply& reply) {
        if (reply.rc != ZOK || !pending_failure_.empty()) return;
        std::vector<std::string> made;
        if (r.type == zk_request::op::create && (r.flags & ZOO_SEQUENCE)) made.push_back(reply.name);
        if (r.type == zk_request::op::multi)
            for (std::size_t i = 0; i < r.ops.size() && i < reply.op_name.size(); ++i)
                if (r.ops[i].type == zk_request::op::create && (r.ops[i].flags & ZOO_SEQUENCE))
                    made.push_back(reply.op_name[i]);
        for (const auto& name : made) {
            const auto dir = name.substr(0, name.rfind('/') + 1);
            for (auto it = server_.nodes().lower_bound(dir); it != server_.nodes().end(); ++it) {
                const auto& [path, n] = *it;
                if (path.rfind(dir, 0) != 0) break;
                if (path == name || n.stat.ephemeralOwner != session || path.find('/', dir.size()) != std::string::npos)
                    continue;
                w_.at(w_.now() + own_node_grace, -1, [this, session, name, older = path] {
                    const auto& nodes = server_.nodes();
                    if (nodes.count(name) && nodes.count(older) && server_.alive(session) && pending_failure_.empty())
                        pending_failure_ = "session " + std::to_string(session) + " waited " +
                                           std::to_string(own_node_grace / 1'000'000'000) + " s with " + name +
                                           " behind its own node " + older;
                });
                return;
            }
        }
    }

    /// The older nodes of live sessions ahead of `node` that exclude it (all
    /// for a mutex or a writer, the writers for a reader); `first`: the lowest.
    std::size_t older_live(const lock_under_test& l, const std::string& node, bool writer, std::string& first) const {
        std::size_t ahead = 0;
        for (const auto& [path, n] : server_.nodes()) {
            if (path.rfind(l.path + "/", 0) != 0 || n.stat.ephemeralOwner == 0 || path == node) continue;
            if (!server_.alive(n.stat.ephemeralOwner) || !precedes(sequence_of(path), sequence_of(node))) continue;
            if (l.kind == lock_under_test::recipe::read_write && !writer && path.find("-write-") == std::string::npos)
                continue;
            if (++ahead == 1) first = path;
        }
        return ahead;
    }
    static std::size_t allowed_ahead(const lock_under_test& l) {
        return l.kind == lock_under_test::recipe::semaphore ? l.permits - 1 : 0;
    }

    /// FIFO by sequence: an exclusive grant (a mutex's, a writer's) comes after
    /// every grant of a lower sequence and before every grant of a higher one;
    /// permits and readers may overtake one another (their wake-ups race),
    /// never a writer. Sequences only grow, so a grant below one already
    /// given was either passed over (a live older node) or given on a node
    /// that had gone before it (expired, or left without the grant knowing).
    void check_fifo(const contender& c, lock_under_test& l, std::int32_t seq) {
        if (l.kind == lock_under_test::recipe::semaphore) return;
        const auto dir = server_.nodes().find(l.path);
        if (dir == server_.nodes().end()) return;
        if (dir->second.stat.czxid != l.dir_czxid) {
            l.dir_czxid = dir->second.stat.czxid;
            l.last_any.reset();
            l.last_exclusive.reset();
        }
        const bool exclusive = c.writer;
        const auto& bound = exclusive ? l.last_any : l.last_exclusive;
        if (bound && !precedes(*bound, seq) && pending_failure_.empty())
            pending_failure_ = "c" + std::to_string(c.index) + " granted out of sequence order: " +
                               std::to_string(seq) + " after " + (exclusive ? "a grant of " : "an exclusive grant of ") +
                               std::to_string(*bound);
        auto raise = [&](std::optional<std::int32_t>& v) {
            if (!v || precedes(*v, seq)) v = seq;
        };
        raise(l.last_any);
        if (exclusive) raise(l.last_exclusive);
    }

    /// The sequence after the marker (ZooKeeper's %010d: "-2147483648" after the wrap).
    static std::int32_t sequence_of(const std::string& path) {
        std::size_t pos = path.size();
        while (pos > 0 && path[pos - 1] >= '0' && path[pos - 1] <= '9') --pos;
        if (pos >= 2 && path[pos - 1] == '-' && path[pos - 2] == '-') --pos;  // "-lock--2147483648"
        return static_cast<std::int32_t>(std::stoll(path.substr(pos)));
    }
    /// a before b in serial-number order.
    static bool precedes(std::int32_t a, std::int32_t b) {
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b)) < 0;
    }

    const std::string* node_of(std::int64_t czxid) const {
        for (const auto& [path, n] : server_.nodes())
            if (n.stat.czxid == czxid && n.stat.ephemeralOwner != 0) return &path;
        return nullptr;
    }

    void release(contender& c) {
        // Every lost hold reported: a hold the library gave up (is_held()
        // false without an unlock) is reported lost, if not already; the
        // holder waits for that report before it unlocks.
        // So is a hold whose node the server no longer has (another client
        // deleted it, the session expired) while the library still says held.
        const bool lost = !c.mutex->is_held() || !node_of(c.token);
        if (c.holding && lost && c.losses_reported == c.reported_at_grant) {
            c.awaiting_report = true;
            w_.note("c" + std::to_string(c.index) + " was given up; waits for its loss report");
            return;
        }
        c.holding = false;
        w_.note("c" + std::to_string(c.index) + " unlocks");
        c.mutex->async_unlock([this, &c](std::error_code ec) {
            if (stopping_) return;
            if (w_.verbose) w_.note("c" + std::to_string(c.index) + " unlocked: " + ec.message());
            w_.at(w_.now() + ms(w_.uniform(0, 100)), c.process, [this, &c] { acquire(c); });
        });
    }

    void schedule_fault(int n) {
        const nanos when = ms(w_.uniform(10, 3000));
        const int kind = static_cast<int>(w_.uniform(0, 7));
        const bool first_in_line = w_.chance(0.5);
        const int who = static_cast<int>(w_.uniform(0, n - 1));
        const nanos length = ms(w_.uniform(50, 3000));
        w_.at(when, -1, [this, kind, who, length, first_in_line] {
            const auto& target = targets_[static_cast<std::size_t>(who)];
            const auto sid = (*target.second)->session_id();
            const std::string name = "c" + std::to_string(who);
            switch (kind) {
            case 0:
                w_.note("fault: connection of " + name + " dropped");
                drop_connection(sid);
                break;
            case 1:
                w_.note("fault: " + name + " partitioned for " + std::to_string(length / 1'000'000) + " ms");
                partition(sid, w_.now() + length);
                break;
            case 2:
                w_.note("fault: process of " + name + " paused for " + std::to_string(length / 1'000'000) + " ms");
                w_.pause(target.first, w_.now() + length);
                break;
            case 3:
                w_.note("fault: the next request of " + name + " loses its reply");
                drop_after_next_request(sid);
                break;
            case 4:
            case 5: {
                // Another client deletes a lock node, or writes Curator's revocation into it.
                std::vector<std::string> nodes;
                for (const auto& [path, node] : server_.nodes())
                    if (path.rfind("/sim/lock", 0) == 0 && node.stat.ephemeralOwner != 0) nodes.push_back(path);
                if (nodes.empty()) return;
                std::string victim = nodes[static_cast<std::size_t>(w_.uniform(0, static_cast<std::int64_t>(nodes.size()) - 1))];
                if (kind == 4 && first_in_line) {
                    // The first in line: a holder's, or a waiter's not told yet.
                    const auto dir = victim.substr(0, victim.rfind('/') + 1);
                    for (const auto& p : nodes)
                        if (p.rfind(dir, 0) == 0 && precedes(sequence_of(p), sequence_of(victim))) victim = p;
                }
                if (kind == 4) {
                    // First by the recipe's rule (its grant may be on its way), or still behind others.
                    const auto& l = *std::find_if(locks_.begin(), locks_.end(), [&](const lock_under_test& x) {
                        return victim.rfind(x.path + "/", 0) == 0;
                    });
                    std::string first;
                    const bool writer = victim.find("-read-") == std::string::npos;
                    const auto czxid = server_.nodes().at(victim).stat.czxid;
                    if (older_live(l, victim, writer, first) > allowed_ahead(l)) deleted_waiting_.insert(czxid);
                    else foreign_deleted_.insert(czxid);
                }
                int negotiated = 0;
                // Its session lives as long as the server's longest timeout: a new one when it expired.
                if (!foreign_ || !server_.alive(foreign_)) foreign_ = server_.open_session(20'000, negotiated);
                zk_request r;
                r.path = victim;
                if (kind == 4) {
                    r.type = zk_request::op::remove;
                    w_.note("fault: another client deletes " + victim);
                } else {
                    r.type = zk_request::op::set_data;
                    r.data = "__REVOKE__";
                    w_.note("fault: another client writes __REVOKE__ into " + victim);
                }
                if (const auto rc = server_.apply(foreign_, r).rc; rc != ZOK)
                    w_.note("fault: refused (" + std::to_string(rc) + ")");
                break;
            }
            case 6:
            case 7: {
                // A neighbour's setACL. On a lock node: only reads (and
                // ACL changes) left to others, so its owner's release mark
                // is refused. On a lock directory, for `length`: no creates,
                // so new nodes and the release proof's sibling are refused.
                std::vector<std::string> paths;
                for (const auto& [path, node] : server_.nodes()) {
                    const bool lock_node = node.stat.ephemeralOwner != 0;
                    const bool dir = !lock_node && !node.children.empty();
                    if (path.rfind("/sim/lock", 0) == 0 && (kind == 6 ? lock_node : dir)) paths.push_back(path);
                }
                if (paths.empty()) return;
                const auto victim = paths[static_cast<std::size_t>(w_.uniform(0, static_cast<std::int64_t>(paths.size()) - 1))];
                int negotiated = 0;
                if (!foreign_ || !server_.alive(foreign_)) foreign_ = server_.open_session(20'000, negotiated);
                zk_request r;
                r.type = zk_request::op::set_acl;
                r.path = victim;
                r.acl_perms = kind == 6 ? (ZOO_PERM_READ | ZOO_PERM_ADMIN) : (ZOO_PERM_ALL & ~ZOO_PERM_CREATE);
                w_.note("fault: another client " + std::string(kind == 6 ? "makes " + victim + " read-only"
                                                                         : "refuses creates under " + victim) +
                        (kind == 7 ? " for " + std::to_string(length / 1'000'000) + " ms" : ""));
                if (const auto rc = server_.apply(foreign_, r).rc; rc != ZOK)
                    w_.note("fault: refused (" + std::to_string(rc) + ")");
                if (kind == 7)
                    w_.at(w_.now() + length, -1, [this, victim] {
                        if (!server_.nodes().count(victim)) return;
                        int negotiated_again = 0;
                        if (!foreign_ || !server_.alive(foreign_)) foreign_ = server_.open_session(20'000, negotiated_again);
                        zk_request back;
                        back.type = zk_request::op::set_acl;
                        back.path = victim;
                        back.acl_perms = ZOO_PERM_ALL;
                        w_.note("fault ends: creates under " + victim + " allowed again");
                        server_.apply(foreign_, back);
                    });
                break;
            }
            }
        });
    }

    bool check(schedule_result& out) {
        if (!w_.model_error().empty()) {
            fail(out, "simulator error: " + w_.model_error());
            return false;
        }
        if (!pending_failure_.empty()) {
            fail(out, pending_failure_);
            return false;
        }
        // Never more holders whose budgets are positive (each on its own
        // clock) than the recipe allows: one of a mutex, K of a semaphore, a
        // writer alone or readers alone. Counted on every step; the holders
        // are named only for a failure's report.
        positive_.assign(locks_.size(), 0);
        writers_.assign(locks_.size(), 0);
        for (auto& c : contenders_) {
            if (!certainly_holds(*c)) continue;
            ++positive_[c->lock];
            if (c->writer) ++writers_[c->lock];
        }
        for (std::size_t i = 0; i < locks_.size(); ++i) {
            const auto& l = locks_[i];
            bool broken = false;
            switch (l.kind) {
            case lock_under_test::recipe::mutex: broken = positive_[i] > 1; break;
            case lock_under_test::recipe::semaphore: broken = positive_[i] > l.permits; break;
            case lock_under_test::recipe::read_write: broken = writers_[i] > 0 && positive_[i] > 1; break;
            }
            if (broken) {
                std::string who;
                for (auto& c : contenders_) {
                    if (c->lock != i || !certainly_holds(*c)) continue;
                    w_.as(c->process, [&] {
                        who += " c" + std::to_string(c->index) + (c->writer ? "" : "(reader)") + "(" +
                               std::to_string(c->mutex->safe_for()->count()) + " ms)";
                    });
                }
                fail(out, l.path + " (" + recipe_name(l.kind) + "): holders with positive budgets at once:" + who);
                return false;
            }
        }
        return true;
    }

    /// Held with a positive budget on its own clock, and counted: deleting a
    /// holder's node breaks the exclusion from outside, and that holder is
    /// only owed the news.
    bool certainly_holds(const contender& c) {
        if (c.holding && (foreign_deleted_.count(c.token) || deleted_waiting_.count(c.token))) return false;
        bool counts = false;
        w_.as(c.process, [&] {
            const auto left = c.mutex->safe_for();
            counts = c.mutex->is_held() && left && left->count() > 0;
        });
        return counts;
    }

    /// Each workload's invariant, in its own form (tests/sim/workload_*.cpp).
    bool check_workloads(schedule_result& out) {
        for (auto& wl : workloads_) wl->check();
        if (pending_failure_.empty()) return true;
        fail(out, pending_failure_);
        return false;
    }

    void final_checks(schedule_result& out) {
        // Every client ended: no lock node, no lock directory left (containers
        // are reaped); the foreign session's expiry is run out first.
        if (foreign_) server_.expire(foreign_);
        while (w_.step()) {}
        for (auto& wl : workloads_) wl->finish();
        if (!pending_failure_.empty()) return fail(out, pending_failure_);
        // A container that never had a child stays (ZooKeeper's ContainerManager
        // reaps only those with cversion > 0): one a contender made and whose
        // node never came (its session expired or its acquire ended between the
        // two) is the server's rule, not a node left; so are the containers
        // holding only such ones. Children sort after their parent: look from the end.
        std::set<std::string> kept;
        const auto& nodes = server_.nodes();
        for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
            const auto& [path, n] = *it;
            const bool never_used = n.container && n.children.empty() && n.stat.cversion == 0;
            const bool holds_only_kept = n.container && !n.children.empty() &&
                                         std::all_of(n.children.begin(), n.children.end(), [&](const std::string& c) {
                                             return kept.count(path + "/" + c) != 0;
                                         });
            if (never_used || holds_only_kept) kept.insert(path);
        }
        for (const auto& [path, n] : nodes) {
            if (path == "/" || kept.count(path) ||
                (precreated_ && (path == "/sim" || path.find('/', 5) == std::string::npos)))
                continue;
            if (std::any_of(workloads_.begin(), workloads_.end(), [&](auto& wl) { return wl->keeps(path); })) continue;
            fail(out, "node left once every client ended: " + path);
            return;
        }
    }

    static constexpr nanos own_node_grace = ms(10'000);
    world w_;
    zk_server server_;
    sim_options options_;
    std::vector<lock_under_test> locks_;
    std::vector<std::unique_ptr<contender>> contenders_;
    std::unique_ptr<workload_env> env_;
    std::vector<std::unique_ptr<workload>> workloads_;
    std::vector<std::pair<int, const std::unique_ptr<Session>*>> targets_;  // per contender: process, session
    std::vector<std::size_t> positive_, writers_;  // per lock, at this step (check())
    std::uint64_t grants_ = 0;
    std::int64_t foreign_ = 0;
    // The czxids of the lock nodes another client deleted: first by the recipe's rule, or behind others.
    std::set<std::int64_t> foreign_deleted_, deleted_waiting_;
    bool precreated_ = false;
    std::string pending_failure_;
    bool stopping_ = false;
};

} // namespace

schedule_result run_schedule(std::uint64_t seed, const sim_options& options) {
    schedule s(seed, options);
    return s.run();
}

} // namespace zklock::sim
