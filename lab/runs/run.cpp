#include "runs/run.hpp"

#include "bench.hpp"
#include "runs/client_schedule.hpp"
#include "runs/fairness.hpp"
#include "common.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <future>
#include <limits>
#include <system_error>
#include <utility>

namespace zklock::cli {
namespace {

void unlock_confirmed(Lock& lock) {
    std::promise<std::error_code> done;
    auto f = done.get_future();
    lock.async_unlock([&done](std::error_code ec) { done.set_value(ec); });
    throw_if(f.get(), "zklock bench: unlock");
}

lock_stats summed(const std::vector<Lock*>& locks) {
    lock_stats total;
    for (const auto* l : locks) add_stats(total, l->stats());
    return total;
}

// Server-queued backends (advisory and row locks) hand the lock over in the
// server: their wake-ups are not visible to the client.
bool wakeups_visible(const Lock& lock) {
    const auto backend = lock.capabilities().backend;
    return backend != "postgres-advisory" && backend != "postgres-row" && backend != "mysql-advisory" &&
           backend != "mysql-row";
}

} // namespace

void warm_up(Lock& lock, int cycles) {
    for (int i = 0; i < cycles; ++i) {
        lock.lock();
        unlock_confirmed(lock);
    }
}

bench_result run_uncontended(Lock& lock, const scenario_options& o) {
    const auto before = lock.stats();
    std::vector<double> samples;
    samples.reserve(static_cast<std::size_t>(std::max(o.ops, 0)));
    const auto schedule_from = read_process_schedule();
    const auto start = bench_clock::now();
    for (int i = 0; i < o.ops; ++i) {
        const auto t0 = bench_clock::now();
        lock.lock();
        if (o.confirm_unlock) unlock_confirmed(lock);
        else lock.unlock();
        samples.push_back(micros(bench_clock::now() - t0));
    }
    const auto wall = std::chrono::duration<double>(bench_clock::now() - start).count();
    const auto schedule = schedule_per_cycle(schedule_from, read_process_schedule(), static_cast<std::uint64_t>(std::max(o.ops, 0)));
    const auto after = lock.stats();
    // The last delete may still be in flight: one confirmed cycle, not counted.
    if (!o.confirm_unlock) warm_up(lock, 1);
    auto r = timed_result("uncontended", 1, samples, wall);
    r.backend = o.backend;
    r.counters = stats_between(before, after);  // the warm-up before is not counted
    r.wakeups_visible = wakeups_visible(lock);
    if (schedule.is_object()) r.extra.update(schedule);
    r.extra["measures"] = o.confirm_unlock ? "acquire + release, each waiting for the server"
                                           : "acquire + release; the release returns once sent";
    return r;
}

bench_result clients_result(std::vector<grant_record> all, bench_clock::time_point start,
                            const std::vector<Lock*>& locks, const scenario_options& o, bool separate) {
    const int k = static_cast<int>(locks.size());
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.granted < b.granted; });
    std::vector<double> waits;
    for (const auto& g : all) waits.push_back(micros(g.granted - g.requested));
    const auto end = all.empty() ? bench_clock::now() : all.back().granted;
    auto r = timed_result(separate ? "separate" : "contended", k, waits, std::chrono::duration<double>(end - start).count());
    r.backend = o.backend;
    r.counters = summed(locks);
    r.wakeups_visible = wakeups_visible(*locks.front());
    r.extra["longest_wait_us"] = waits.empty() ? std::nan("") : *std::max_element(waits.begin(), waits.end());
    if (separate) {
        r.extra["measures"] = "acquire on K separate locks (one per client)";
        return r;
    }
    // Handoff: a holder's release call to the next grant (grants of one lock
    // never overlap, so consecutive records are holder and successor).
    std::vector<double> handoffs;
    for (std::size_t i = 1; i < all.size(); ++i) handoffs.push_back(micros(all[i].granted - all[i - 1].released));
    r.extra["handoff_p50_us"] = percentile(handoffs, 0.5);
    r.extra["handoff_p99_us"] = percentile(handoffs, 0.99);
    const int overtaken = out_of_order_grants(all);
    r.extra["out_of_order_grants"] = overtaken;
    r.extra["most_overtaken"] = most_overtaken(all);
    r.extra["out_of_order_share"] = all.empty() ? 0.0 : static_cast<double>(overtaken) / static_cast<double>(all.size());
    r.extra["measures"] = "acquire wait with K clients on one lock";
    return r;
}

bench_result run_clients(const std::vector<Lock*>& locks, const scenario_options& o, bool separate) {
    const int k = static_cast<int>(locks.size());
    std::atomic<int> remaining{o.ops};
    std::vector<std::vector<grant_record>> records(locks.size());
    for (auto& mine : records) mine.reserve(static_cast<std::size_t>(std::max(o.ops, 0)) / locks.size() + 1);
    const auto start = run_together(
        k,
        [&](int i) {
            auto& lock = *locks[static_cast<std::size_t>(i)];
            auto& mine = records[static_cast<std::size_t>(i)];
            while (true) {
                grant_record g;
                g.requested = bench_clock::now();
                lock.lock();
                g.granted = bench_clock::now();
                const bool last = remaining.fetch_sub(1) <= 0;
                g.released = bench_clock::now();
                if (o.confirm_unlock) unlock_confirmed(lock);
                else lock.unlock();
                if (last) break;
                mine.push_back(g);
            }
        },
        [&] { remaining = std::numeric_limits<int>::min() / 2; });

    std::vector<grant_record> all;
    for (const auto& v : records) all.insert(all.end(), v.begin(), v.end());
    return clients_result(std::move(all), start, locks, o, separate);
}

bench_result run_clients_on_one_thread(const boost::asio::any_io_executor& executor, const std::vector<Lock*>& locks,
                                       const scenario_options& o) {
    // Everything below runs on the executor's one thread: no atomics, no locks.
    struct run_state {
        const std::vector<Lock*>& locks;
        int remaining;
        int running;
        std::vector<grant_record> all;
        std::error_code failure;
        std::promise<void> done;
        void take(std::size_t i) {
            const auto requested = bench_clock::now();
            locks[i]->async_lock([this, i, requested](std::error_code ec) {
                if (ec || failure) {
                    if (ec && !failure) failure = ec;
                    if (!ec) locks[i]->unlock();
                    return finished();
                }
                grant_record g;
                g.requested = requested;
                g.granted = bench_clock::now();
                const bool last = remaining-- <= 0;
                g.released = bench_clock::now();
                locks[i]->unlock();
                if (last) return finished();
                all.push_back(g);
                take(i);
            });
        }
        void finished() {
            if (--running == 0) done.set_value();
        }
    };
    run_state st{locks, o.ops, static_cast<int>(locks.size()), {}, {}, {}};
    st.all.reserve(static_cast<std::size_t>(std::max(o.ops, 0)));
    auto finished = st.done.get_future();
    bench_clock::time_point start;
    // Every thread of the run (this one, the executor's) lives through it: what
    // the scheduler did for them is the run's, per grant.
    const auto schedule_from = read_process_schedule();
    boost::asio::post(executor, [&] {
        start = bench_clock::now();
        for (std::size_t i = 0; i < locks.size(); ++i) st.take(i);
    });
    finished.wait();
    const auto schedule = schedule_per_cycle(schedule_from, read_process_schedule(), static_cast<std::uint64_t>(std::max(o.ops, 0)));
    throw_if(st.failure, "zklock bench: lock");
    auto r = clients_result(std::move(st.all), start, locks, o, false);
    r.extra["one_thread"] = true;
    if (schedule.is_object()) r.extra.update(schedule);
    return r;
}

} // namespace zklock::cli
