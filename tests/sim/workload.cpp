#include "workload.hpp"

#include <zklock/error.hpp>
#include <zklock/log.hpp>
#include <zklock/session_options.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace zklock::sim {

sim_contender::sim_contender(workload_env& env, int index_, std::string path)
    : index(index_), process(env.w.add_process(env.w.uniform(-10'000, 10'000))),  // up to 1% fast or slow
      lock_path(std::move(path)), env_(env) {
    rounds_left = static_cast<int>(env.w.uniform(1, 4));
    env.w.as(process, [&] {
        SessionOptions o;
        o.connect = "127.0.0.1:2181";
        o.session_timeout = std::chrono::milliseconds(env.timeout_ms);
        if (env.w.verbose) {
            o.log.level = log_level::debug;
            o.log.callback = [&w = env.w, i = index](const log_record& r) {
                w.note("c" + std::to_string(i) + " log: " + std::string(r.message));
            };
        }
        session = std::make_unique<Session>(env.w.io(process).get_executor(), o);
    });
    env.w.wake(process);
}

void sim_contender::start() { later(ms(env_.w.uniform(0, 200)), [this] { acquire(); }); }

void sim_contender::later(nanos delay, std::function<void()> fn) {
    env_.w.at(env_.w.now() + delay, process, [this, fn = std::move(fn)] {
        if (!env_.stopping) fn();
    });
}

bool sim_contender::certainly_holds() {
    bool counts = false;
    env_.w.as(process, [&] {
        const auto left = safe_for();
        counts = is_held() && left && left->count() > 0;
    });
    return counts;
}

void sim_contender::teardown() {
    env_.w.as(process, [&] {
        drop_lock();
        session.reset();
    });
    env_.w.wake(process);
}

void sim_contender::acquire() {
    if (rounds_left == 0) {
        done = true;
        return;
    }
    --rounds_left;
    if (env_.w.verbose) env_.w.note(name() + " asks for " + lock_path);
    async_acquire([this](std::error_code ec) {
        if (env_.stopping) return;
        if (ec) {
            env_.w.note(name() + " lock failed: " + ec.message());
            later(ms(env_.w.uniform(1, 100)), [this] { acquire(); });
            return;
        }
        on_granted();
    });
}

void sim_contender::on_granted() {
    holding = true;
    reported_at_grant_ = losses_reported;
    token = fencing_token();
    granted_at = env_.w.now();
    env_.w.note(name() + " holds " + lock_path + " (token " + std::to_string(token) + ", session " +
                std::to_string(session->session_id()) + ")");
    if (on_grant) on_grant(*this);
    granted();
}

void sim_contender::granted() {
    later(ms(env_.w.uniform(1, 400)), [this] { release(); });
}

void sim_contender::report_loss(std::error_code ec) {
    if (env_.stopping) return;
    ++losses_reported;
    last_loss = ec;
    env_.w.note(name() + " told its hold is lost: " + ec.message());
    lost(ec);
    if (awaiting_report_) {
        awaiting_report_ = false;
        release();
    }
}

void sim_contender::release() {
    // Every lost hold reported: a hold the library gave up unreported is
    // waited on until its report comes (the runner fails a run that ends first).
    if (holding && !is_held() && losses_reported == reported_at_grant_) {
        awaiting_report_ = true;
        env_.w.note(name() + " was given up; waits for its loss report");
        return;
    }
    holding = false;
    env_.w.note(name() + " unlocks");
    async_release([this](std::error_code ec) {
        if (env_.stopping) return;
        if (env_.w.verbose) env_.w.note(name() + " unlocked: " + ec.message());
        later(ms(env_.w.uniform(0, 100)), [this] { acquire(); });
    });
}

mutex_contender::mutex_contender(workload_env& env, int index_, std::string path, MutexOptions options)
    : sim_contender(env, index_, path) {
    env.w.as(process, [&] {
        mutex_ = std::make_unique<Mutex>(*session, path, std::move(options));
        mutex_->on_lost([this](std::error_code ec) { report_loss(ec); });
    });
    env.w.wake(process);
}

void mutex_contender::async_acquire(std::function<void(std::error_code)> done) {
    drawn_acquire(env_.w, process, *mutex_, std::move(done));
}

void mutex_contender::async_release(std::function<void(std::error_code)> done) {
    mutex_->async_unlock(std::move(done));
}

acquire_draw draw_acquire(world& w) {
    acquire_draw d;
    const auto roll = w.uniform(0, 7);
    if (roll < 2) d.how = acquire_draw::kind::deadline;
    else if (roll == 2) d.how = acquire_draw::kind::cancelled;
    if (d.how != acquire_draw::kind::plain)
        d.after = std::chrono::milliseconds(w.uniform(d.how == acquire_draw::kind::deadline ? 1 : 0, 1500));
    return d;
}

std::shared_ptr<boost::asio::cancellation_signal> cancel_after(world& w, int process, nanos delay) {
    auto signal = std::make_shared<boost::asio::cancellation_signal>();
    w.at(w.now() + delay, process, [signal] { signal->emit(boost::asio::cancellation_type::terminal); });
    return signal;
}

void drawn_acquire(world& w, int process, Lock& lock, std::function<void(std::error_code)> done) {
    const auto d = draw_acquire(w);
    switch (d.how) {
    case acquire_draw::kind::plain: lock.async_lock(std::move(done)); return;
    case acquire_draw::kind::deadline:
        lock.async_try_lock_for(d.after, [done = std::move(done)](std::error_code ec, bool acquired) {
            if (!ec && !acquired) ec = make_error_code(errc::timeout);
            done(ec);
        });
        return;
    case acquire_draw::kind::cancelled: {
        auto signal = cancel_after(w, process, ms(d.after.count()));
        // The handler keeps the signal (and the slot it gave) alive until it runs.
        lock.async_lock(boost::asio::bind_cancellation_slot(
            signal->slot(), [done = std::move(done), signal](std::error_code ec) { done(ec); }));
        return;
    }
    }
}

void check_exclusion(workload_env& env, const std::vector<std::unique_ptr<sim_contender>>& contenders,
                     const std::string& what, std::size_t allowed) {
    // Counted on every step; the holders are named only for a failure's report.
    const auto holds = [](sim_contender& c) {
        return c.counts_for_exclusion() && (c.holding || c.is_held()) && c.certainly_holds();
    };
    std::size_t holders = 0;
    for (const auto& c : contenders) holders += holds(*c) ? 1 : 0;
    if (holders <= allowed) return;
    std::string who;
    for (const auto& c : contenders)
        if (holds(*c)) who += " " + c->name();
    env.fail(what + ": holders with positive budgets at once:" + who);
}

std::vector<sim_contender*> workload::contenders() const {
    std::vector<sim_contender*> out;
    for (const auto& c : contenders_) out.push_back(c.get());
    return out;
}

bool workload::done() const {
    return std::all_of(contenders_.begin(), contenders_.end(), [](const auto& c) { return c->done; });
}

void workload::close_sessions() {
    for (auto& c : contenders_) {
        env_.w.as(c->process, [&] { c->session->close(); });
        env_.w.wake(c->process);
    }
}

void workload::teardown() {
    for (auto& c : contenders_) c->teardown();
}

std::unique_ptr<workload> make_workload(workload_kind kind, workload_env& env, int instance) {
    switch (kind) {
    case workload_kind::lock_set: return make_lock_set_workload(env, instance);
    case workload_kind::election: return make_election_workload(env, instance);
    case workload_kind::lock_delay: return make_lock_delay_workload(env, instance);
    case workload_kind::revocation: return make_revocation_workload(env, instance);
    case workload_kind::guarded: return make_guarded_workload(env, instance);
    case workload_kind::requeue: return make_requeue_workload(env, instance);
    }
    return nullptr;
}

std::int32_t sequence_of(const std::string& path) {
    std::size_t pos = path.size();
    while (pos > 0 && path[pos - 1] >= '0' && path[pos - 1] <= '9') --pos;
    if (pos >= 2 && path[pos - 1] == '-' && path[pos - 2] == '-') --pos;  // "-lock--2147483648"
    return static_cast<std::int32_t>(std::stoll(path.substr(pos)));
}

bool serial_before(std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b)) < 0;
}

std::int64_t children_version(const zk_server& server, const std::string& dir) {
    const auto it = server.nodes().find(dir);
    return it == server.nodes().end() ? -1 : it->second.stat.pzxid;
}

std::vector<std::string> queue_of(const zk_server& server, const std::string& dir) {
    std::vector<std::pair<std::int32_t, std::string>> found;
    const auto it = server.nodes().find(dir);
    if (it == server.nodes().end()) return {};
    for (const auto& child : it->second.children) {
        auto path = dir + "/" + child;
        const auto n = server.nodes().find(path);
        if (n != server.nodes().end() && n->second.stat.ephemeralOwner != 0)
            found.emplace_back(sequence_of(path), std::move(path));
    }
    std::sort(found.begin(), found.end(),
              [](const auto& a, const auto& b) { return serial_before(a.first, b.first); });
    std::vector<std::string> out;
    out.reserve(found.size());
    for (auto& f : found) out.push_back(std::move(f.second));
    return out;
}

const std::string* node_with_czxid(const zk_server& server, std::int64_t czxid) {
    for (const auto& [path, n] : server.nodes())
        if (n.stat.czxid == czxid && n.stat.ephemeralOwner != 0) return &path;
    return nullptr;
}

} // namespace zklock::sim
