// Revocation: revocable Mutex contenders that, once granted, hold until they
// are asked to let go; the contender second in line asks the one first in
// line, writing Curator's __REVOKE__ into its node through its own session.
// The holder must give up (the hold ends as a loss, errc::revoked): a holder
// that ignores the request keeps the lock, and the run never ends. After
// every step: one holder at a time, and once an asked node is gone, the next
// grant is the revoker's while its node is still there.
#include "workload.hpp"

#include "session/session_access.hpp"
#include "session/session_impl.hpp"

#include <zklock/mutex.hpp>
#include <zklock/revocation.hpp>

#include <zookeeper.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zklock::sim {
namespace {

class revocable_contender final : public mutex_contender {
public:
    revocable_contender(workload_env& env, int index_, const std::string& path)
        : mutex_contender(env, index_, path, options()) {}
    /// Nobody else will ask: let go after a while, as the others do.
    void let_go_unasked() {
        if (!holding || releasing_) return;
        releasing_ = true;
        later(ms(env_.w.uniform(1, 100)), [this] { release(); });
    }

private:
    static MutexOptions options() {
        MutexOptions o;
        o.revocable = true;
        return o;
    }
    void granted() override { releasing_ = false; }  // hold until asked
    void lost(std::error_code) override {
        if (!holding || releasing_) return;
        releasing_ = true;
        later(0, [this] { release(); });
    }
    bool releasing_ = false;
};

class revocation_workload final : public workload {
public:
    revocation_workload(workload_env& env, int instance)
        : workload(env), path_("/sim/revocable" + std::to_string(instance)) {}
    std::string describe() const override { return path_ + ": revocable mutex, holders asked to let go"; }

    void add(int index) override {
        contenders_.push_back(std::make_unique<revocable_contender>(env_, index, path_));
        auto& c = *contenders_.back();
        c.on_grant = [this](sim_contender& g) { on_grant(g); };
        env_.w.note(c.name() + " takes " + path_);
        c.start();
    }

    void check() override {
        check_exclusion(env_, contenders_, exclusion_);
        // Whoever holds last, with nobody left to ask it, lets go.
        std::size_t active = 0;
        for (auto& c : contenders_) active += c->done ? 0 : 1;
        if (active <= 1)
            for (auto& c : contenders_) static_cast<revocable_contender&>(*c).let_go_unasked();
        // The queue is read anew when it changed (a child came or went, or
        // the directory was made or reaped: its pzxid moves).
        if (const auto v = children_version(env_.server, path_); v != seen_) {
            seen_ = v;
            queue_ = queue_of(env_.server, path_);
        }
        const auto& q = queue_;
        const auto& nodes = env_.server.nodes();
        // An asked node gone: its revoker is next, if still in line.
        for (auto it = asked_.begin(); it != asked_.end();) {
            if (nodes.count(it->first)) {
                ++it;
                continue;
            }
            if (it->second.applied && nodes.count(it->second.revoker_node))
                expect_next_ = it->second;
            it = asked_.erase(it);
        }
        // The second in line asks the first.
        if (q.size() >= 2 && !asked_.count(q[0])) {
            for (auto& c : contenders_) {
                auto& m = static_cast<mutex_contender&>(*c);
                bool mine = false;
                env_.w.as(c->process, [&] { mine = m.mutex().node_path() == q[1]; });
                if (mine) {
                    ask(*c, q[0], q[1]);
                    break;
                }
            }
        }
    }

private:
    struct request {
        int revoker = 0;
        std::string revoker_node;
        bool applied = false;
    };

    void ask(sim_contender& revoker, const std::string& holder_node, const std::string& own_node) {
        asked_[holder_node] = request{revoker.index, own_node, false};
        env_.w.note(revoker.name() + " asks " + holder_node + " to let go");
        auto impl = detail::session_access::session(*revoker.session);
        env_.w.as(revoker.process, [&] {
            impl->post([this, impl, holder_node] {
                impl->set_data(holder_node, std::string(revocation_request_data), -1, [this, holder_node](int rc) {
                    if (env_.stopping) return;
                    const auto it = asked_.find(holder_node);
                    if (it == asked_.end()) return;
                    if (rc == ZOK) it->second.applied = true;
                    else if (rc != ZNONODE) asked_.erase(it);  // unknown outcome: ask again
                });
            });
        });
        env_.w.wake(revoker.process);
    }

    void on_grant(sim_contender& c) {
        if (!expect_next_) return;
        const auto want = *expect_next_;
        expect_next_.reset();
        if (c.index != want.revoker && env_.server.nodes().count(want.revoker_node))
            env_.fail(c.name() + " granted " + path_ + " after a revoked holder let go, before the revoker c" +
                      std::to_string(want.revoker) + " still in line at " + want.revoker_node);
    }

    std::string path_;
    std::string exclusion_ = path_ + " (revocable)";  // what check_exclusion names
    std::map<std::string, request> asked_;  // node asked -> by whom
    std::optional<request> expect_next_;
    std::int64_t seen_ = -2;          // children_version at the last read
    std::vector<std::string> queue_;  // as of seen_
};

} // namespace

std::unique_ptr<workload> make_revocation_workload(workload_env& env, int instance) {
    return std::make_unique<revocation_workload>(env, instance);
}

} // namespace zklock::sim
