// Lock sets: MultiMutex contenders over two or three of three lock paths,
// listed in any order, beside plain Mutex contenders on one of them. After
// every step: one holder per path (a set counts on each of its paths); a
// set's nodes are all there or none (the transaction creates and deletes them
// as one); and no deadlock: the sets' places in the queues, read from the
// server, never form a cycle of waits.
#include "workload.hpp"

#include <zklock/multi_mutex.hpp>

#include <zookeeper.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace zklock::sim {
namespace {

class set_contender final : public sim_contender {
public:
    set_contender(workload_env& env, int index_, std::vector<std::string> paths)
        : sim_contender(env, index_, join(paths)) {
        env.w.as(process, [&] {
            set_ = std::make_unique<MultiMutex>(*session, paths);
            set_->on_lost([this](std::error_code ec) { report_loss(ec); });
        });
        env.w.wake(process);
    }

    void async_acquire(std::function<void(std::error_code)> done) override {
        drawn_acquire(env_.w, process, *set_, std::move(done));
    }
    void async_release(std::function<void(std::error_code)> done) override { set_->async_unlock(std::move(done)); }
    bool is_held() const override { return set_->is_held(); }
    std::optional<std::chrono::milliseconds> safe_for() const override { return set_->safe_for(); }
    std::int64_t fencing_token() const override { return set_->fencing_token(); }
    void drop_lock() override { set_.reset(); }

private:
    static std::string join(const std::vector<std::string>& paths) {
        std::string out;
        for (const auto& p : paths) out += (out.empty() ? "" : ",") + p;
        return out;
    }
    std::unique_ptr<MultiMutex> set_;
};

/// The guid of a zklock node name `_c_<guid>-lock-<seq>` (empty for another form).
std::string guid_of(const std::string& path) {
    const auto name = path.substr(path.rfind('/') + 1);
    const auto end = name.find("-lock-");
    if (name.rfind("_c_", 0) != 0 || end == std::string::npos) return {};
    return name.substr(3, end - 3);
}

class lock_set_workload final : public workload {
public:
    lock_set_workload(workload_env& env, int instance) : workload(env) {
        for (const char* leaf : {"a", "b", "c"}) paths_.push_back("/sim/set" + std::to_string(instance) + leaf);
    }
    std::string describe() const override { return "lock sets over " + paths_[0] + ", b and c"; }

    void add(int index) override {
        auto& w = env_.w;
        if (w.chance(0.3)) {
            const auto& path = paths_[static_cast<std::size_t>(w.uniform(0, 2))];
            contenders_.push_back(std::make_unique<mutex_contender>(env_, index, path));
        } else {
            auto paths = paths_;
            std::shuffle(paths.begin(), paths.end(), w.rng());
            paths.resize(static_cast<std::size_t>(w.uniform(2, 3)));
            contenders_.push_back(std::make_unique<set_contender>(env_, index, paths));
        }
        unsigned mask = 0;
        for (std::size_t i = 0; i < paths_.size(); ++i)
            if (("," + contenders_.back()->lock_path + ",").find("," + paths_[i] + ",") != std::string::npos)
                mask |= 1u << i;
        paths_of_.push_back(mask);
        w.note(contenders_.back()->name() + " takes " + contenders_.back()->lock_path);
        contenders_.back()->start();
    }

    void check() override {
        // One holder per path.
        std::array<int, 3> count{};
        for (std::size_t k = 0; k < contenders_.size(); ++k) {
            auto& c = *contenders_[k];
            if (!c.holding && !c.is_held()) continue;
            if (!c.certainly_holds()) continue;
            for (std::size_t i = 0; i < paths_.size(); ++i) count[i] += (paths_of_[k] >> i) & 1u;
        }
        for (std::size_t i = 0; i < paths_.size(); ++i) {
            if (count[i] <= 1) continue;
            std::string holders;
            for (std::size_t k = 0; k < contenders_.size(); ++k) {
                auto& c = *contenders_[k];
                if ((paths_of_[k] >> i & 1u) && (c.holding || c.is_held()) && c.certainly_holds())
                    holders += " " + c.name();
            }
            env_.fail(paths_[i] + " (lock sets): holders with positive budgets at once:" + holders);
        }
        // The rest reads the queues: only when one changed (a child came or
        // went, or a directory was made or reaped: its pzxid moves).
        std::array<std::int64_t, 3> seen{};
        for (std::size_t i = 0; i < paths_.size(); ++i) seen[i] = children_version(env_.server, paths_[i]);
        if (seen == seen_) return;
        seen_ = seen;
        // Every set's nodes: all or none.
        std::map<std::string, std::size_t> present;
        std::vector<std::vector<std::string>> queues;
        for (const auto& path : paths_) {
            queues.push_back(queue_of(env_.server, path));
            for (const auto& n : queues.back()) ++present[guid_of(n)];
        }
        for (const auto& [guid, count] : present) {
            const auto it = size_of_.find(guid);
            if (it != size_of_.end() && count != it->second) {
                env_.fail("lock set " + guid + " has " + std::to_string(count) + " of its " +
                          std::to_string(it->second) + " nodes on the server");
                return;
            }
        }
        // No deadlock: the graph "waits behind" over the queues has no cycle.
        std::map<std::string, std::set<std::string>> behind;  // guid -> guids right ahead of it
        for (const auto& q : queues)
            for (std::size_t i = 1; i < q.size(); ++i) {
                const auto a = guid_of(q[i - 1]), b = guid_of(q[i]);
                if (a != b) behind[b].insert(a);
            }
        std::map<std::string, int> state;  // 1: on the path, 2: done
        std::function<bool(const std::string&)> cycle = [&](const std::string& g) {
            auto& s = state[g];
            if (s == 1) return true;
            if (s == 2) return false;
            s = 1;
            for (const auto& a : behind[g])
                if (cycle(a)) return true;
            state[g] = 2;
            return false;
        };
        for (const auto& [g, ahead] : behind)
            if (cycle(g)) {
                env_.fail("lock sets deadlocked: a cycle of waits through " + g);
                return;
            }
    }

    void applied(std::int64_t, const zk_request& r, const zk_reply& reply) override {
        // How many nodes each set has, from the transaction that made them.
        if (r.type != zk_request::op::multi || reply.rc != ZOK) return;
        std::map<std::string, std::size_t> made;
        for (std::size_t i = 0; i < r.ops.size() && i < reply.op_name.size(); ++i)
            if (r.ops[i].type == zk_request::op::create && ours(r.ops[i].path))
                if (const auto g = guid_of(reply.op_name[i]); !g.empty()) ++made[g];
        for (const auto& [g, n] : made) size_of_[g] = n;
    }

private:
    bool ours(const std::string& path) const {
        for (const auto& p : paths_)
            if (path.rfind(p + "/", 0) == 0) return true;
        return false;
    }
    std::vector<std::string> paths_;
    std::vector<unsigned> paths_of_;  // per contender: which of paths_ it takes (bit i: paths_[i])
    std::map<std::string, std::size_t> size_of_;  // guid -> how many nodes the set has
    std::array<std::int64_t, 3> seen_{-2, -2, -2};  // children_version of paths_ at the last read
};

} // namespace

std::unique_ptr<workload> make_lock_set_workload(workload_env& env, int instance) {
    return std::make_unique<lock_set_workload>(env, instance);
}

} // namespace zklock::sim
