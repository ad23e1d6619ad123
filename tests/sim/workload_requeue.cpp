// Requeue: Mutex holders that take their next turn with QueueLock::requeue
// (the release and the next node's create in one transaction) instead of
// unlock and lock. Checked at each requeue's grant: the hold's node went in
// the transaction that made the new node (one multi: the new node's czxid),
// and every node queued at that commit has left before it (FIFO strict).
// After every step: one holder at a time.
#include "workload.hpp"

#include <zklock/mutex.hpp>

#include <zookeeper.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace zklock::sim {
namespace {

struct requeue_commit {
    std::int64_t session = 0;
    std::int64_t czxid = 0;            // the new node's (the transaction's zxid)
    std::vector<std::string> waiting;  // the other nodes queued at the commit
};

class requeuer final : public mutex_contender {
public:
    requeuer(workload_env& env, int index_, const std::string& path, const std::map<std::string, requeue_commit>& commits)
        : mutex_contender(env, index_, path), commits_(commits) {}

private:
    void granted() override {
        later(ms(env_.w.uniform(1, 400)), [this] {
            if (rounds_left == 0 || !mutex().is_held()) return release();
            --rounds_left;
            holding = false;
            const auto old = mutex().node_path();
            const auto before = session->session_id();
            env_.w.note(name() + " requeues " + old);
            mutex().async_requeue([this, old, before](std::error_code ec) {
                if (env_.stopping) return;
                if (ec) {
                    env_.w.note(name() + " requeue failed: " + ec.message());
                    later(ms(env_.w.uniform(1, 100)), [this] { acquire(); });
                    return;
                }
                // A session that expired during the requeue queues again in
                // the next one, as lock() does: that grant is no requeue's.
                if (session->session_id() == before) check_requeue(old);
                on_granted();
            });
        });
    }
    void check_requeue(const std::string& old) {
        const auto it = commits_.find(old);
        const auto czxid = mutex().fencing_token();
        if (it == commits_.end() || it->second.czxid != czxid) {
            env_.fail(name() + " requeued from " + old + " without one transaction releasing it and queueing again");
            return;
        }
        for (const auto& w : it->second.waiting)
            if (env_.server.nodes().count(w)) {
                env_.fail(name() + " granted again by its requeue from " + old + " while " + w +
                          ", queued before it, is still in line");
                return;
            }
    }
    const std::map<std::string, requeue_commit>& commits_;
};

class requeue_workload final : public workload {
public:
    requeue_workload(workload_env& env, int instance)
        : workload(env), path_("/sim/requeue" + std::to_string(instance)) {}
    std::string describe() const override { return path_ + ": mutex holders that requeue"; }

    void add(int index) override {
        contenders_.push_back(std::make_unique<requeuer>(env_, index, path_, commits_));
        env_.w.note(contenders_.back()->name() + " takes " + path_);
        contenders_.back()->start();
    }

    void check() override {
        check_exclusion(env_, contenders_, exclusion_);
    }

    void applied(std::int64_t session, const zk_request& r, const zk_reply& reply) override {
        if (r.type != zk_request::op::multi || reply.rc != ZOK) return;
        const auto prefix = path_ + "/";
        std::string removed, created;
        for (std::size_t i = 0; i < r.ops.size(); ++i) {
            const auto& o = r.ops[i];
            if (o.type == zk_request::op::remove && o.path.rfind(prefix, 0) == 0) removed = o.path;
            if (o.type == zk_request::op::create && o.path.rfind(prefix, 0) == 0 && i < reply.op_name.size())
                created = reply.op_name[i];
        }
        if (removed.empty() || created.empty()) return;
        const auto n = env_.server.nodes().find(created);
        if (n == env_.server.nodes().end()) return;
        requeue_commit c{session, n->second.stat.czxid, {}};
        for (const auto& q : queue_of(env_.server, path_))
            if (q != created) c.waiting.push_back(q);
        commits_[removed] = std::move(c);
    }

private:
    std::string path_;
    std::string exclusion_ = path_ + " (requeue)";  // what check_exclusion names
    std::map<std::string, requeue_commit> commits_;  // the node a requeue released -> its commit
};

} // namespace

std::unique_ptr<workload> make_requeue_workload(workload_env& env, int instance) {
    return std::make_unique<requeue_workload>(env, instance);
}

} // namespace zklock::sim
