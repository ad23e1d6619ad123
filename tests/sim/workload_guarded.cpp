// Guarded writes: Mutex holders write their fencing token into a data node
// with commit_guarded's transaction (a check of the hold's node, then the
// write), while an operator now and then deletes the holder's node, so that
// holders write on after their hold is gone. Checked at every commit the
// server applies: the write's hold's node still exists and is first in its
// queue, and the tokens written only grow.
#include "workload.hpp"

#include "recipes/guarded_commit.hpp"
#include "session/session_access.hpp"

#include <zklock/guarded_write.hpp>
#include <zklock/mutex.hpp>

#include <zookeeper.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace zklock::sim {
namespace {

class writer final : public mutex_contender {
public:
    writer(workload_env& env, int index_, const std::string& path, std::string data_path,
           const std::set<std::int64_t>& deleted)
        : mutex_contender(env, index_, path), data_path_(std::move(data_path)), deleted_(deleted) {}
    bool node_deleted = false;  // the operator deleted the node of this hold
    /// A holder whose node the operator deleted is only owed the news.
    bool counts_for_exclusion() const override { return !node_deleted; }

    /// Writes at once (the operator just deleted its node: it does not know yet).
    void write_now() {
        env_.w.as(process, [this] { write(); });
        env_.w.wake(process);
    }

private:
    void granted() override {
        node_deleted = deleted_.count(token) != 0;
        const auto hold = ms(env_.w.uniform(1, 400));
        const int writes = static_cast<int>(env_.w.uniform(1, 3));
        for (int i = 0; i < writes; ++i) later(env_.w.uniform(0, hold), [this] { write(); });
        later(hold, [this] { release(); });
    }
    void write() {
        // As QueueLock::commit_guarded: nothing sent unless held.
        if (!holding || !mutex().is_held()) return;
        const auto node = mutex().node_path();
        const auto t = std::to_string(token);
        detail::async_commit_guarded(detail::session_access::session(*session), {node},
                                     {guarded_op::set_data(data_path_, t)},
                                     [this, t](std::error_code ec, const guarded_result&) {
                                         if (env_.stopping || !env_.w.verbose) return;
                                         env_.w.note(name() + " guarded write of " + t + ": " + ec.message());
                                     });
    }
    std::string data_path_;
    const std::set<std::int64_t>& deleted_;  // czxids of the nodes the operator deleted
};

class guarded_workload final : public workload {
public:
    guarded_workload(workload_env& env, int instance)
        : workload(env), path_("/sim/guarded" + std::to_string(instance)),
          data_path_("/guarded-data" + std::to_string(instance)) {
        env.server.precreate(data_path_, 0);
        const int deletes = static_cast<int>(env.w.uniform(0, 2));
        for (int i = 0; i < deletes; ++i) env.w.at(ms(env.w.uniform(10, 3000)), -1, [this] { operator_delete(); });
    }
    std::string describe() const override { return path_ + ": mutex holders' guarded writes into " + data_path_; }
    bool keeps(const std::string& path) const override { return path == data_path_; }

    void add(int index) override {
        contenders_.push_back(std::make_unique<writer>(env_, index, path_, data_path_, deleted_));
        env_.w.note(contenders_.back()->name() + " takes " + path_);
        contenders_.back()->start();
    }

    void check() override {
        check_exclusion(env_, contenders_, exclusion_);
    }

    void applied(std::int64_t session, const zk_request& r, const zk_reply& reply) override {
        if (r.type != zk_request::op::multi || reply.rc != ZOK) return;
        for (const auto& o : r.ops) {
            if (o.type != zk_request::op::set_data || o.path != data_path_) continue;
            const auto t = std::stoll(o.data);
            const auto* node = node_with_czxid(env_.server, t);
            const auto q = queue_of(env_.server, path_);
            if (!node || env_.server.nodes().at(*node).stat.ephemeralOwner != session)
                env_.fail("a guarded write of token " + o.data + " committed with its hold's node gone");
            else if (q.empty() || q.front() != *node)
                env_.fail("a guarded write of token " + o.data + " committed while " + *node + " is not first");
            else if (t < last_)
                env_.fail("guarded writes out of order: token " + o.data + " after " + std::to_string(last_));
            last_ = t;
        }
    }

private:
    void operator_delete() {
        const auto q = queue_of(env_.server, path_);
        if (q.empty()) return;
        const auto czxid = env_.server.nodes().at(q.front()).stat.czxid;
        deleted_.insert(czxid);
        for (auto& c : contenders_)
            if (c->holding && c->token == czxid) static_cast<writer&>(*c).node_deleted = true;
        std::vector<writer*> to_write;
        for (auto& c : contenders_)
            if (c->holding && c->token == czxid) to_write.push_back(static_cast<writer*>(c.get()));
        env_.w.note("fault: an operator deletes " + q.front());
        int negotiated = 0;
        const auto s = env_.server.open_session(20'000, negotiated);
        zk_request r;
        r.type = zk_request::op::remove;
        r.path = q.front();
        env_.server.apply(s, r);
        env_.server.close_session(s);
        for (auto* c : to_write) c->write_now();
    }

    std::string path_, data_path_;
    std::string exclusion_ = path_ + " (guarded writes)";  // what check_exclusion names
    std::int64_t last_ = 0;
    std::set<std::int64_t> deleted_;
};

} // namespace

std::unique_ptr<workload> make_guarded_workload(workload_env& env, int instance) {
    return std::make_unique<guarded_workload>(env, instance);
}

} // namespace zklock::sim
