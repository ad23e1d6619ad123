// Leader election: LeaderElection participants campaign, lead for a while and
// resign. After
// every step: at most one leader whose term has a positive budget, and no
// participant leads while an older node of a live session precedes its own.
#include "workload.hpp"

#include <zklock/leader_election.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>

#include <memory>
#include <string>
#include <utility>

namespace zklock::sim {
namespace {

class participant final : public sim_contender {
public:
    participant(workload_env& env, int index_, const std::string& path) : sim_contender(env, index_, path) {
        env.w.as(process, [&] {
            election_ = std::make_unique<LeaderElection>(*session, path, name());
            election_->on_lost([this](std::error_code ec) { report_loss(ec); });
        });
        env.w.wake(process);
    }
    void async_acquire(std::function<void(std::error_code)> done) override {
        // A campaign has no deadline of its own: one drawn with one, or
        // cancelled, is cancelled by its caller then.
        auto handler = [done = std::move(done)](std::error_code ec, Leadership) { done(ec); };
        const auto d = draw_acquire(env_.w);
        if (d.how == acquire_draw::kind::plain) {
            election_->async_campaign(std::move(handler));
            return;
        }
        auto signal = cancel_after(env_.w, process, ms(d.after.count()));
        election_->async_campaign(boost::asio::bind_cancellation_slot(
            signal->slot(), [handler = std::move(handler), signal](std::error_code ec, Leadership term) {
                handler(ec, std::move(term));
            }));
    }
    void async_release(std::function<void(std::error_code)> done) override {
        election_->async_resign(std::move(done));
    }
    bool is_held() const override { return election_->is_leader(); }
    std::optional<std::chrono::milliseconds> safe_for() const override { return election_->safe_for(); }
    std::int64_t fencing_token() const override {
        const auto term = election_->leadership();
        return term ? term->epoch : 0;
    }
    void drop_lock() override { election_.reset(); }

private:
    std::unique_ptr<LeaderElection> election_;
};

class election_workload final : public workload {
public:
    election_workload(workload_env& env, int instance)
        : workload(env), path_("/sim/election" + std::to_string(instance)) {}
    std::string describe() const override { return path_ + ": leader election"; }

    void add(int index) override {
        contenders_.push_back(std::make_unique<participant>(env_, index, path_));
        env_.w.note(contenders_.back()->name() + " campaigns on " + path_);
        contenders_.back()->start();
    }

    void check() override {
        check_exclusion(env_, contenders_, exclusion_);
        // A leader's node is first among the live sessions' nodes.
        for (auto& c : contenders_) {
            if (!c->holding || c->granted_at != env_.w.now()) continue;
            const auto* mine = node_with_czxid(env_.server, c->token);
            if (!mine) continue;  // already gone: its loss must be reported
            const auto q = queue_of(env_.server, path_);
            if (!q.empty() && q.front() != *mine)
                env_.fail(c->name() + " leads " + path_ + " while " + q.front() + " precedes its " + *mine);
        }
    }

private:
    std::string path_;
    std::string exclusion_ = path_ + " (leaders)";  // what check_exclusion names
};

} // namespace

std::unique_ptr<workload> make_election_workload(workload_env& env, int instance) {
    return std::make_unique<election_workload>(env, instance);
}

} // namespace zklock::sim
