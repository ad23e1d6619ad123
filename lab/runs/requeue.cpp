#include "runs/requeue.hpp"

#include "bench.hpp"
#include "runs/client_schedule.hpp"
#include "runs/fairness.hpp"
#include "runs/result.hpp"
#include "runs/run.hpp"

#include <zklock/lock.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace zklock::cli {
namespace {

bench_result one_worker(QueueLock& worker, const requeue_options& o) {
    worker.lock();
    for (int i = 0; i < o.warmup; ++i) worker.requeue();
    if (o.on_measuring) o.on_measuring();
    const auto before = worker.stats();
    std::vector<double> samples;
    samples.reserve(static_cast<std::size_t>(std::max(o.ops, 0)));
    const auto schedule_from = read_process_schedule();
    const auto start = bench_clock::now();
    for (int i = 0; i < o.ops; ++i) {
        const auto t0 = bench_clock::now();
        worker.requeue();
        samples.push_back(micros(bench_clock::now() - t0));
    }
    const auto wall = std::chrono::duration<double>(bench_clock::now() - start).count();
    const auto schedule =
        schedule_per_cycle(schedule_from, read_process_schedule(), static_cast<std::uint64_t>(std::max(o.ops, 0)));
    const auto after = worker.stats();
    worker.unlock();
    auto r = timed_result("uncontended", 1, samples, wall);
    r.counters = stats_between(before, after);
    if (schedule.is_object()) r.extra.update(schedule);
    r.extra["measures"] = "one worker's turn: requeue() (release and queue again in one transaction) to the grant";
    return r;
}

bench_result fleet(const std::vector<QueueLock*>& workers, const requeue_options& o) {
    std::atomic<int> remaining{o.ops};
    std::atomic<int> queued{0};
    std::vector<std::vector<grant_record>> records(workers.size());
    for (auto& mine : records) mine.reserve(static_cast<std::size_t>(std::max(o.ops, 0)) / workers.size() + 1);
    const auto start = run_together(
        static_cast<int>(workers.size()),
        [&](int i) {
            auto& worker = *workers[static_cast<std::size_t>(i)];
            auto& mine = records[static_cast<std::size_t>(i)];
            worker.lock();  // the first grant: lock() queued the worker, not a turn
            if (queued.fetch_add(1) + 1 == static_cast<int>(workers.size()) && o.on_measuring) o.on_measuring();
            for (;;) {
                grant_record g;
                g.requested = bench_clock::now();  // the release of the hold before, in the same call
                worker.requeue();
                g.granted = bench_clock::now();
                const bool last = remaining.fetch_sub(1) <= 0;
                g.released = bench_clock::now();
                if (last) {
                    worker.unlock();
                    return;
                }
                mine.push_back(g);
            }
        },
        [&] { remaining = std::numeric_limits<int>::min() / 2; });
    std::vector<grant_record> all;
    for (const auto& v : records) all.insert(all.end(), v.begin(), v.end());
    std::vector<Lock*> locks(workers.begin(), workers.end());
    scenario_options so;
    so.backend = "zookeeper";
    so.ops = o.ops;
    auto r = clients_result(std::move(all), start, locks, so, false);
    r.extra["measures"] = "K workers taking turns with requeue(): from a holder's requeue() to its next grant";
    return r;
}

} // namespace

bench_result run_requeue_turns(const std::vector<QueueLock*>& workers, const requeue_options& o) {
    auto r = workers.size() == 1 ? one_worker(*workers.front(), o) : fleet(workers, o);
    r.backend = "zookeeper";
    r.extra["requeue"] = true;
    return r;
}

} // namespace zklock::cli
