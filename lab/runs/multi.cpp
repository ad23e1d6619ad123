// zklock bench --scenario multi. K clients, each taking a random subset (2 or
// 3) of M lock paths, holding it for a moment, again and again; an acquisition
// that is not granted within the timeout gives up and is counted (with single
// locks taken in each caller's own order, that is how a deadlock shows).
#include "runs/multi.hpp"

#include "bench.hpp"
#include "common.hpp"

#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

namespace zklock::cli {
namespace {
using clock_type = std::chrono::steady_clock;

const char* label(multi_method m) {
    switch (m) {
    case multi_method::multi_mutex: return "zklock MultiMutex";
    case multi_method::sorted_singles: return "zklock single locks, sorted order";
    case multi_method::unsorted_singles: return "zklock single locks, caller's order";
    }
    return "";
}

// One attempt at `set` within `timeout`: true when it was held (and released).
bool take_and_release(Session& s, const std::vector<std::string>& set, multi_method method,
                      std::chrono::milliseconds timeout, std::chrono::microseconds hold, double& waited_us) {
    const auto t0 = clock_type::now();
    const auto waited = [&] { waited_us = std::chrono::duration<double, std::micro>(clock_type::now() - t0).count(); };
    if (method == multi_method::multi_mutex) {
        MultiMutex m(s, set);
        if (!m.try_lock_for(timeout)) return false;
        waited();
        std::this_thread::sleep_for(hold);  // the work under the locks
        m.unlock();
        return true;
    }
    // One lock after the other, each within what is left of the timeout (as a
    // caller of single locks would); on a timeout the ones held go.
    auto order = set;
    if (method == multi_method::sorted_singles) std::sort(order.begin(), order.end());
    const auto deadline = t0 + timeout;
    std::vector<std::unique_ptr<Mutex>> held;
    for (const auto& path : order) {
        auto m = std::make_unique<Mutex>(s, path);
        if (!m->try_lock_until(deadline)) {
            for (auto& h : held) h->unlock();
            return false;
        }
        held.push_back(std::move(m));
    }
    waited();
    std::this_thread::sleep_for(hold);
    for (auto it = held.rbegin(); it != held.rend(); ++it) (*it)->unlock();
    return true;
}

} // namespace

nlohmann::json run_multi(const multi_bench_options& o, multi_method method) {
    std::vector<std::string> paths;
    for (int i = 0; i < o.paths; ++i) paths.push_back(o.base + "/p" + std::to_string(i));
    std::vector<std::unique_ptr<Session>> sessions;
    for (int i = 0; i < o.clients; ++i) {
        sessions.push_back(std::make_unique<Session>(o.session));
        connect_or_throw(*sessions.back());
    }
    std::atomic<int> remaining{o.ops};
    std::atomic<int> timeouts{0};
    std::mutex samples_mutex;
    std::vector<double> samples;
    const auto start = run_together(
        o.clients,
        [&](int id) {
            std::mt19937 rng(static_cast<unsigned>(id) + 1);
            std::vector<double> mine;
            while (remaining.fetch_sub(1) > 0) {
                auto set = paths;
                std::shuffle(set.begin(), set.end(), rng);
                set.resize(std::min<std::size_t>(set.size(), 2 + rng() % 2));
                double waited_us = 0;
                if (take_and_release(*sessions[static_cast<std::size_t>(id)], set, method, o.timeout, o.hold,
                                     waited_us))
                    mine.push_back(waited_us);
                else
                    ++timeouts;
            }
            std::lock_guard lk(samples_mutex);
            samples.insert(samples.end(), mine.begin(), mine.end());
        },
        [&] { remaining = 0; });
    const double wall_s = std::chrono::duration<double>(clock_type::now() - start).count();
    const double mean = samples.empty() ? 0 : std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
    return {{"backend", label(method)},
            {"scenario", "multi"},
            {"clients", o.clients},
            {"ops", static_cast<int>(samples.size())},
            {"p50_us", percentile(samples, 0.50)},
            {"p99_us", percentile(samples, 0.99)},
            {"mean_us", mean},
            {"ops_per_s", static_cast<double>(samples.size()) / wall_s},
            {"wall_s", wall_s},
            {"timeouts", timeouts.load()},
            {"paths", o.paths},
            {"timeout_ms", o.timeout.count()}};
}

} // namespace zklock::cli
