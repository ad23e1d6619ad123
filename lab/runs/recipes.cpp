// zklock bench --recipe election | semaphore | rwlock: the other recipes on
// the same engine, each with K clients on one path.
#include "bench.hpp"
#include "runs/zookeeper.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <random>

namespace zklock::cli::zkbench {
namespace {

// --- the other recipes ---------------------------------------------------------

std::vector<std::unique_ptr<Session>> connect_sessions(const bench_options& o, int k) {
    std::vector<std::unique_ptr<Session>> sessions;
    for (int i = 0; i < k; ++i) {
        sessions.push_back(std::make_unique<Session>(session_options(o)));
        connect_or_throw(*sessions.back());
    }
    return sessions;
}

// Runs body(i) on k threads that start together (run_together). When a thread
// fails, `abort` is set and every session is closed, so that the other threads'
// blocking calls fail too instead of waiting for a turn that never comes.
void run_sessions_together(int k, std::atomic<bool>& abort, const std::vector<std::unique_ptr<Session>>& sessions,
                           const std::function<void(int)>& body) {
    run_together(k, body, [&] {
        if (!abort.exchange(true))
            for (const auto& session : sessions) session->close();
    });
}

// Leader election failover: K participants campaign on one path; each leader
// resigns as soon as its campaign completes and campaigns again (it rejoins the
// end of the line). A sample is the time from the leader's resign() call to the
// completion of the next leader's campaign (both steady_clock, one process).
} // namespace

bench_result run_election(const bench_options& o) {
    const auto path = unique_path(o, "election");
    const int k = std::max(1, o.clients);
    const int handoffs = o.ops;
    auto sessions = connect_sessions(o, k);
    std::vector<std::unique_ptr<LeaderElection>> elections;
    for (int i = 0; i < k; ++i)
        elections.push_back(std::make_unique<LeaderElection>(*sessions[static_cast<std::size_t>(i)], path,
                                                             "bench-" + std::to_string(i)));

    std::atomic<int> terms{0};                        // leaderships granted so far
    std::atomic<clock_type::rep> resigned_at{0};      // when the last leader called resign()
    std::atomic<clock_type::rep> last_handoff_at{0};  // completion of handoff number `handoffs`
    std::vector<std::vector<double>> samples(static_cast<std::size_t>(k));
    std::atomic<bool> abort{false};
    const auto start = clock_type::now();
    run_sessions_together(k, abort, sessions, [&](int i) {
        auto& election = *elections[static_cast<std::size_t>(i)];
        auto& mine = samples[static_cast<std::size_t>(i)];
        while (!abort.load()) {
            election.campaign();
            const auto won = clock_type::now();
            const int term = terms.fetch_add(1);  // 0 = the first leader: no handoff before it
            if (term >= 1 && term <= handoffs) {
                mine.push_back(micros(won - clock_type::time_point(clock_type::duration(resigned_at.load()))));
                if (term == handoffs) last_handoff_at = won.time_since_epoch().count();
            }
            resigned_at = clock_type::now().time_since_epoch().count();
            election.resign();
            // Leave once every handoff is measured: each participant leads one last
            // time (so whoever is still waiting gets through) and stops.
            if (term >= handoffs) break;
        }
    });
    std::vector<double> all;
    for (const auto& v : samples) all.insert(all.end(), v.begin(), v.end());
    lock_stats counted;
    for (auto& e : elections) add_stats(counted, e->stats());
    const auto end = last_handoff_at.load() ? clock_type::time_point(clock_type::duration(last_handoff_at.load()))
                                            : clock_type::now();
    auto r = timed_result("election", k, all, std::chrono::duration<double>(end - start).count());
    r.counters = counted;
    r.extra = {{"recipe", "election"},
               {"measures", "failover: leader's resign() to the next leader's campaign completing"},
               {"handoffs_per_s", r.ops_per_s},
               {"failover_p50_us", r.p50_us},
               {"failover_p99_us", r.p99_us},
               {"acquisitions", counted.acquisitions}};
    return r;
}

// Semaphore: K clients, P permits, N acquisitions in all; each client's permit
// acquires, releases at once and acquires again. A sample is its lock() as the
// caller sees it.
bench_result run_semaphore(const bench_options& o) {
    const auto path = unique_path(o, "semaphore");
    const int k = std::max(1, o.clients);
    const auto permits = static_cast<std::size_t>(std::max(1, o.permits));
    auto sessions = connect_sessions(o, k);
    std::vector<QueueLock> held_permits;
    for (int i = 0; i < k; ++i)
        held_permits.push_back(Semaphore(*sessions[static_cast<std::size_t>(i)], path, permits).permit());

    std::atomic<int> remaining{o.ops};
    std::vector<std::vector<double>> samples(static_cast<std::size_t>(k));
    std::atomic<bool> abort{false};
    std::vector<lock_stats> counted(static_cast<std::size_t>(k));
    const auto start = clock_type::now();
    run_sessions_together(k, abort, sessions, [&](int i) {
        auto& permit = held_permits[static_cast<std::size_t>(i)];
        auto& mine = samples[static_cast<std::size_t>(i)];
        while (!abort.load()) {
            const auto t0 = clock_type::now();
            permit.lock();
            const bool last = remaining.fetch_sub(1) <= 0;
            if (!last) mine.push_back(micros(clock_type::now() - t0));
            permit.unlock();
            if (last) break;
        }
        counted[static_cast<std::size_t>(i)] = permit.stats();
    });
    const auto wall = std::chrono::duration<double>(clock_type::now() - start).count();
    std::vector<double> all;
    for (const auto& v : samples) all.insert(all.end(), v.begin(), v.end());
    auto r = timed_result("semaphore", k, all, wall);
    r.counters.emplace();
    for (const auto& c : counted) add_stats(*r.counters, c);
    r.extra = {{"recipe", "semaphore"}, {"permits", permits}, {"measures", "acquire() wait"}};
    return r;
}

// Read-write lock: K clients, each operation a read (lock_shared) with
// probability read_ratio, otherwise a write (lock); released at once.
bench_result run_rwlock(const bench_options& o) {
    const auto path = unique_path(o, "rwlock");
    const int k = std::max(1, o.clients);
    auto sessions = connect_sessions(o, k);
    std::vector<std::unique_ptr<SharedMutex>> locks;
    for (int i = 0; i < k; ++i)
        locks.push_back(std::make_unique<SharedMutex>(*sessions[static_cast<std::size_t>(i)], path));

    std::atomic<int> remaining{o.ops};
    std::vector<std::vector<double>> reads(static_cast<std::size_t>(k)), writes(static_cast<std::size_t>(k));
    std::atomic<bool> abort{false};
    const auto start = clock_type::now();
    run_sessions_together(k, abort, sessions, [&](int i) {
        auto& rw = *locks[static_cast<std::size_t>(i)];
        std::mt19937 rng(static_cast<std::uint32_t>(i + 1));  // reproducible mix per client
        std::bernoulli_distribution is_read(o.read_ratio);
        while (!abort.load()) {
            const bool read = is_read(rng);
            const auto t0 = clock_type::now();
            if (read) rw.lock_shared();
            else rw.lock();
            const auto t1 = clock_type::now();
            const bool last = remaining.fetch_sub(1) <= 0;
            if (!last) (read ? reads : writes)[static_cast<std::size_t>(i)].push_back(micros(t1 - t0));
            if (read) rw.unlock_shared();
            else rw.unlock();
            if (last) break;
        }
    });
    const auto wall = std::chrono::duration<double>(clock_type::now() - start).count();
    std::vector<double> all, all_reads, all_writes;
    for (int i = 0; i < k; ++i) {
        all_reads.insert(all_reads.end(), reads[static_cast<std::size_t>(i)].begin(), reads[static_cast<std::size_t>(i)].end());
        all_writes.insert(all_writes.end(), writes[static_cast<std::size_t>(i)].begin(), writes[static_cast<std::size_t>(i)].end());
    }
    all = all_reads;
    all.insert(all.end(), all_writes.begin(), all_writes.end());
    lock_stats w, rd;
    for (auto& l : locks) {
        add_stats(w, l->writer().stats());
        add_stats(rd, l->reader().stats());
    }

    auto r = timed_result("rwlock", k, all, wall);
    // The counters per grant are the writers' (writer().stats(), not reader().stats()).
    r.counters = w;
    r.extra = {{"recipe", "rwlock"},
               {"read_ratio", o.read_ratio},
               {"reads", all_reads.size()},
               {"writes", all_writes.size()},
               {"read_p50_us", percentile(all_reads, 0.50)},
               {"read_p99_us", percentile(all_reads, 0.99)},
               {"write_p50_us", percentile(all_writes, 0.50)},
               {"write_p99_us", percentile(all_writes, 0.99)},
               {"reader_wakeups_per_grant", ratio(rd.wakeups, rd.acquisitions)},
               {"reader_attempts_per_grant", ratio(rd.attempts, rd.acquisitions)}};
    return r;
}

} // namespace zklock::cli::zkbench
