// zklock bench --recipe election | semaphore | rwlock: the other recipes on
// the same engine, each with K clients on one path.
#include "bench.hpp"
#include "bench_zookeeper.hpp"

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
        connect(*sessions.back());
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

double us_between(clock_type::time_point a, clock_type::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
}

// Leader election failover: K participants campaign on one path; each leader
// resigns as soon as its campaign completes and campaigns again (it rejoins the
// end of the line). A sample is the time from the leader's resign() call to the
// completion of the next leader's campaign (both steady_clock, one process).
} // namespace

result run_election(const bench_options& o) {
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
                mine.push_back(us_between(clock_type::time_point(clock_type::duration(resigned_at.load())), won));
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
    std::uint64_t acquisitions = 0, notifications = 0, listings = 0;
    for (auto& e : elections) {
        const auto st = e->stats();
        acquisitions += st.acquisitions;
        notifications += st.wakeups;
        listings += st.attempts;
    }
    const auto end = last_handoff_at.load() ? clock_type::time_point(clock_type::duration(last_handoff_at.load()))
                                            : clock_type::now();
    auto r = timed_result("election", k, all, std::chrono::duration<double>(end - start).count());
    r.notifications_per_acquire = static_cast<double>(notifications) / static_cast<double>(acquisitions);
    r.getchildren_per_acquire = static_cast<double>(listings) / static_cast<double>(acquisitions);
    r.extra = {{"recipe", "election"},
               {"measures", "failover: leader's resign() to the next leader's campaign completing"},
               {"handoffs_per_s", r.ops_per_s},
               {"failover_p50_us", r.p50_us},
               {"failover_p99_us", r.p99_us},
               {"acquisitions", acquisitions}};
    return r;
}

// Semaphore: K clients, P permits, N acquisitions in all; each client acquires,
// releases at once and acquires again. A sample is acquire() as the caller sees it.
result run_semaphore(const bench_options& o) {
    const auto path = unique_path(o, "semaphore");
    const int k = std::max(1, o.clients);
    const auto permits = static_cast<std::size_t>(std::max(1, o.permits));
    auto sessions = connect_sessions(o, k);
    std::vector<std::unique_ptr<Semaphore>> semaphores;
    for (int i = 0; i < k; ++i)
        semaphores.push_back(std::make_unique<Semaphore>(*sessions[static_cast<std::size_t>(i)], path, permits));

    std::atomic<int> remaining{o.ops};
    std::vector<std::vector<double>> samples(static_cast<std::size_t>(k));
    std::atomic<bool> abort{false};
    std::atomic<std::uint64_t> grants{0}, notifications{0}, listings{0};
    const auto start = clock_type::now();
    run_sessions_together(k, abort, sessions, [&](int i) {
        auto& sem = *semaphores[static_cast<std::size_t>(i)];
        auto& mine = samples[static_cast<std::size_t>(i)];
        while (!abort.load()) {
            const auto t0 = clock_type::now();
            Lease lease = sem.acquire();
            const bool last = remaining.fetch_sub(1) <= 0;
            if (!last) mine.push_back(us_between(t0, clock_type::now()));
            const auto st = lease.stats();
            grants += st.acquisitions;
            notifications += st.wakeups;
            listings += st.attempts;
            lease.release();
            if (last) break;
        }
    });
    const auto wall = std::chrono::duration<double>(clock_type::now() - start).count();
    std::vector<double> all;
    for (const auto& v : samples) all.insert(all.end(), v.begin(), v.end());
    auto r = timed_result("semaphore", k, all, wall);
    r.notifications_per_acquire = static_cast<double>(notifications) / static_cast<double>(grants);
    r.getchildren_per_acquire = static_cast<double>(listings) / static_cast<double>(grants);
    r.extra = {{"recipe", "semaphore"}, {"permits", permits}, {"measures", "acquire() wait"}};
    return r;
}

// Read-write lock: K clients, each operation a read (lock_shared) with
// probability read_ratio, otherwise a write (lock); released at once.
result run_rwlock(const bench_options& o) {
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
            if (!last) (read ? reads : writes)[static_cast<std::size_t>(i)].push_back(us_between(t0, t1));
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
        const auto ws = l->stats();
        const auto rs = l->stats_shared();
        w.acquisitions += ws.acquisitions;
        w.wakeups += ws.wakeups;
        w.attempts += ws.attempts;
        rd.acquisitions += rs.acquisitions;
        rd.wakeups += rs.wakeups;
        rd.attempts += rs.attempts;
    }

    auto ratio = [](std::uint64_t a, std::uint64_t b) {
        return b ? static_cast<double>(a) / static_cast<double>(b) : std::numeric_limits<double>::quiet_NaN();
    };
    auto r = timed_result("rwlock", k, all, wall);
    // The existing fields carry the writers' figures (SharedMutex::stats(), not stats_shared()).
    r.notifications_per_acquire = ratio(w.wakeups, w.acquisitions);
    r.getchildren_per_acquire = ratio(w.attempts, w.acquisitions);
    r.extra = {{"recipe", "rwlock"},
               {"read_ratio", o.read_ratio},
               {"reads", all_reads.size()},
               {"writes", all_writes.size()},
               {"read_p50_us", percentile(all_reads, 0.50)},
               {"read_p99_us", percentile(all_reads, 0.99)},
               {"write_p50_us", percentile(all_writes, 0.50)},
               {"write_p99_us", percentile(all_writes, 0.99)},
               {"writer_notifications_per_acquire", r.notifications_per_acquire},
               {"writer_getchildren_per_acquire", r.getchildren_per_acquire},
               {"reader_notifications_per_acquire", ratio(rd.wakeups, rd.acquisitions)},
               {"reader_getchildren_per_acquire", ratio(rd.attempts, rd.acquisitions)}};
    return r;
}

} // namespace zklock::cli::zkbench
