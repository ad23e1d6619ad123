// Lock-delay: Mutex contenders with MutexOptions::lock_delay. The handover
// invariant, read from the server's tree after every step: when the node
// first in the queue goes without a clean release (the transaction that
// deletes it also writes `zklock released=<its sequence>` into the lock
// directory, so the directory's mzxid is its pzxid), nobody is told it holds
// before lock_delay has passed on its own clock since that moment.
#include "workload.hpp"

#include <zklock/mutex.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace zklock::sim {
namespace {

/// The sequence of the last clean release recorded in a lock directory's data.
std::optional<std::int64_t> recorded_release(const std::string& data) {
    static const std::string marker = "zklock released=";
    const auto at = data.rfind(marker);
    if (at == std::string::npos) return std::nullopt;
    try {
        return std::stoll(data.substr(at + marker.size()));
    } catch (...) {
        return std::nullopt;
    }
}

class lock_delay_workload final : public workload {
public:
    lock_delay_workload(workload_env& env, int instance)
        : workload(env), path_("/sim/delayed" + std::to_string(instance)), delay_(ms(env.w.uniform(1, 4) * 100)) {}
    std::string describe() const override {
        return path_ + ": mutex with lock-delay " + std::to_string(delay_ / 1'000'000) + " ms";
    }

    void add(int index) override {
        MutexOptions o;
        o.lock_delay = std::chrono::milliseconds(delay_ / 1'000'000);
        contenders_.push_back(std::make_unique<mutex_contender>(env_, index, path_, o));
        auto& c = *contenders_.back();
        c.on_grant = [this](sim_contender& g) { on_grant(g); };
        env_.w.note(c.name() + " takes " + path_);
        c.start();
    }

    void check() override {
        check_exclusion(env_, contenders_, exclusion_);
        // The rest reads the queue: only when it changed (a child came or
        // went, or the directory was made or reaped: its pzxid moves).
        if (const auto v = children_version(env_.server, path_); v != seen_) seen_ = v;
        else return;
        const auto& nodes = env_.server.nodes();
        const auto dir = nodes.find(path_);
        if (dir == nodes.end()) {
            // The container was reaped with the record of the last release:
            // a grant in the directory made again still waits from the loss.
            head_.reset();
            return;
        }
        if (head_ && !nodes.count(*head_)) {
            const auto& st = dir->second.stat;
            const auto released = recorded_release(dir->second.data);
            const bool clean = released && *released == sequence_of(*head_) && st.mzxid == st.pzxid;
            if (!clean) {
                lost_at_ = env_.w.now();
                env_.w.note(*head_ + " went without a clean release: lock-delay from now");
            }
        }
        const auto q = queue_of(env_.server, path_);
        head_.reset();
        if (!q.empty()) head_ = q.front();
    }

private:
    void on_grant(sim_contender& c) {
        if (!lost_at_) return;
        // Elapsed on the grantee's clock since the loss reached the server.
        const auto waited = env_.w.local_of(c.process, env_.w.now()) - env_.w.local_of(c.process, *lost_at_);
        if (waited >= delay_) return;
        env_.fail(c.name() + " granted " + path_ + " " + std::to_string(waited / 1'000'000) +
                  " ms (its clock) after a holder's node went without a clean release; lock-delay is " +
                  std::to_string(delay_ / 1'000'000) + " ms");
    }

    std::string path_;
    std::string exclusion_ = path_ + " (lock-delay)";  // what check_exclusion names
    nanos delay_;
    std::optional<std::string> head_;  // the first node at the last step
    std::optional<nanos> lost_at_;     // the last loss of a first node
    std::int64_t seen_ = -2;           // children_version at the last read
};

} // namespace

std::unique_ptr<workload> make_lock_delay_workload(workload_env& env, int instance) {
    return std::make_unique<lock_delay_workload>(env, instance);
}

} // namespace zklock::sim
