// zklock bench --scenario waiters | locks: how zklock scales with the length of
// one queue and with the number of locks one Session holds.
//
// waiters: N waiters on one lock, spread round-robin over S sessions, all
// queued first (enqueue phase: every waiter created its node and listed the
// queue once), then drained (each grant releases at once, so the lock passes
// down the whole queue). Grants must come in node-sequence order (FIFO).
// locks: one Session takes N distinct locks at once (all acquires in flight
// together), holds them all, then releases them all; beside it one lock's
// acquire+release cycle through the same Session, and the C client's floors of
// both (runs/floor.cpp), so the line says what pipelining gained against what
// the server allows any client to gain.
// Both report the client's resident memory per waiter / held lock (VmRSS
// before and after, divided by N); locks also the live heap per held lock
// (mallinfo2's bytes in use), which the allocator's free pages do not blur.
#include "bench.hpp"
#include "runs/floor.hpp"
#include "common.hpp"
#include "runs/result.hpp"
#include "terminal_text.hpp"

#include <zklock/mutex.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

namespace zklock::cli {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) {
    return std::chrono::duration<double>(clock_type::now() - t).count();
}

/// This process's resident set, in bytes (VmRSS of /proc/self/status).
long long resident_bytes() {
    std::istringstream in(read_text_file("/proc/self/status"));
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6)) * 1024;
    return 0;
}

/// Bytes the allocator has handed out and not had back (every arena,
/// mallinfo2): the live heap, without the pages it keeps free.
long long heap_in_use() { return static_cast<long long>(::mallinfo2().uordblks); }

/// The sequence at the end of a node path ("…-lock-0000000042" -> 42).
long long sequence_of(const std::string& node_path) {
    const auto digits = node_path.find_last_not_of("0123456789");
    return std::stoll(node_path.substr(digits == std::string::npos ? 0 : digits + 1));
}

/// Counts events and lets one thread wait for a number of them.
class tally {
public:
    void add() {
        {
            std::lock_guard lk(m_);
            ++n_;
        }
        cv_.notify_all();
    }
    std::size_t wait_for(std::size_t n) {
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return n_ >= n; });
        return n_;
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::size_t n_ = 0;
};

std::vector<std::unique_ptr<Session>> open_sessions(const SessionOptions& options, int n) {
    std::vector<std::unique_ptr<Session>> out;
    for (int i = 0; i < n; ++i) {
        out.push_back(std::make_unique<Session>(options));
        connect_or_throw(*out.back());
    }
    return out;
}

/// Seconds for `cycles` lock()+unlock() of one lock through `session`.
double single_lock_seconds(Session& session, const scale_bench_options& o) {
    Mutex m(session, o.path + "/single", o.mutex);
    const auto start = clock_type::now();
    for (int i = 0; i < std::max(1, o.cycles); ++i) {
        m.lock();
        m.unlock();
    }
    return seconds_since(start);
}

/// What the locks line is compared with, measured before zklock's burst.
struct locks_baselines {
    double single_lock_cycles_per_s = 0;  ///< zklock, one lock, the same Session
    std::optional<locks_floor_result> floor_burst;
    double floor_single_lock_cycles_per_s = 0;
};

/// The C client's floors (unless --no-floor: the same burst, one lock's cycle),
/// then zklock's one-lock cycle. The floors run first, so that their lock
/// directories are deleted before zklock's burst (the server reaps emptied
/// containers on its own schedule, and would otherwise do it during the
/// burst), and the memory they used is handed back before zklock's is counted.
locks_baselines measure_baselines(const scale_bench_options& o, Session& session) {
    locks_baselines b;
    const int cycles = std::max(1, o.cycles);
    if (o.floor) {
        locks_floor_options fo;
        fo.connect = o.session.connect;
        fo.auth = o.session.auth;
        fo.dir = o.floor_path;
        fo.locks = std::max(1, o.locks);
        fo.ops = cycles;
        fo.warmup = 0;
        b.floor_burst = run_locks_floor(fo);
        fo.dir += "-single";
        b.floor_single_lock_cycles_per_s = cycles / run_floor(fo).wall_s;
    }
    b.single_lock_cycles_per_s = cycles / single_lock_seconds(session, o);
    ::malloc_trim(0);
    return b;
}

/// Into the locks line: the baselines, and `gain`, the burst's acquire+release
/// rate over the one-lock cycle's (the floor's the same, over its own).
void add_baselines(const scale_bench_options& o, const locks_baselines& b, nlohmann::json& j) {
    j["single_lock_cycles_per_s"] = b.single_lock_cycles_per_s;
    j["gain"] = j["cycles_per_s"].get<double>() / b.single_lock_cycles_per_s;
    if (!b.floor_burst) return;
    const int n = std::max(1, o.locks);
    const double floor_cycles = n / (b.floor_burst->acquire_s + b.floor_burst->release_s);
    j["floor_acquires_per_s"] = n / b.floor_burst->acquire_s;
    j["floor_cycles_per_s"] = floor_cycles;
    j["floor_single_lock_cycles_per_s"] = b.floor_single_lock_cycles_per_s;
    j["floor_gain"] = floor_cycles / b.floor_single_lock_cycles_per_s;
    j["cycles_per_s_vs_floor"] = j["cycles_per_s"].get<double>() / floor_cycles;
}

// Runs `work` on the bench's thread or, with `on_session`, in a handler on
// the Session's executor, waiting for it there; returns the thread it ran on.
template <class Work> std::thread::id run_on(bool on_session, Session& session, Work work) {
    if (!on_session) {
        work();
        return std::this_thread::get_id();
    }
    std::promise<std::thread::id> ran;
    boost::asio::post(session.get_executor(), [&] {
        try {
            work();
            ran.set_value(std::this_thread::get_id());
        } catch (...) {
            ran.set_exception(std::current_exception());  // thrown again on the bench's thread, as without --on-session
        }
    });
    return ran.get_future().get();
}

// Says how many of the run's `what`s failed and why the first did; returns
// the exit status that reason maps to.
int report_errors(const std::vector<std::error_code>& errors, const char* what, const std::string& connect) {
    std::cerr << "zklock bench: " << cli::counted(static_cast<long long>(errors.size()), what) << " failed, e.g. "
              << failure_text(errors.front(), connect) << "\n";
    return exit_status_for(errors.front());
}

} // namespace

int bench_waiters(const scale_bench_options& o) {
    const int n = std::max(2, o.waiters);
    const int s = std::clamp(o.sessions, 1, n);
    auto sessions = open_sessions(o.session, s);
    const auto rss_before = resident_bytes();

    std::vector<std::unique_ptr<Mutex>> waiters;
    waiters.reserve(static_cast<std::size_t>(n));
    tally decided, granted;
    std::mutex m;
    bool draining = false;
    int parked = -1;  // a waiter granted before the drain started: released when it starts
    std::vector<long long> grant_order;
    std::vector<std::error_code> errors;
    const auto release = [&](int i) { waiters[static_cast<std::size_t>(i)]->async_unlock([](std::error_code) {}); };

    // Under lock-delay a new directory's first holder waits the delay (its
    // last holder may have been lost in a directory the server reaped): a
    // gate with a delay of 1 ms holds first, and its clean release starts the
    // drain, so every waiter is handed the lock by a release's record.
    std::unique_ptr<Mutex> gate;
    if (o.mutex.lock_delay.count() > 0) {
        auto gate_options = o.mutex;
        gate_options.lock_delay = std::chrono::milliseconds(1);
        gate = std::make_unique<Mutex>(*sessions.front(), o.path, gate_options);
        gate->lock();
    }

    const auto enqueue_start = clock_type::now();
    for (int i = 0; i < n; ++i) {
        waiters.push_back(std::make_unique<Mutex>(*sessions[static_cast<std::size_t>(i % s)], o.path, o.mutex));
        auto& w = *waiters.back();
        auto first = std::make_shared<std::atomic<bool>>(true);
        w.on_queue_position([&decided, first](std::size_t) {
            if (first->exchange(false)) decided.add();
        });
        w.async_lock([&, i, first](std::error_code ec) {
            {
                std::lock_guard lk(m);
                if (ec) {
                    errors.push_back(ec);
                } else {
                    grant_order.push_back(sequence_of(waiters[static_cast<std::size_t>(i)]->node_path()));
                    if (!draining) parked = i;
                }
            }
            if (!ec && draining) release(i);
            // Failed before it had a place in the queue (a missing chroot, ...): decided too.
            if (ec && first->exchange(false)) decided.add();
            granted.add();
        });
    }
    decided.wait_for(static_cast<std::size_t>(n));
    const double enqueue_s = seconds_since(enqueue_start);
    const auto rss_queued = resident_bytes();
    // A listing of the full queue on the wire: every child's name with its 4-byte length.
    std::size_t listing_bytes = 0;
    for (const auto& w : waiters) {
        const auto node = w->node_path();
        listing_bytes += node.size() - node.rfind('/') - 1 + 4;
    }

    const auto drain_start = clock_type::now();
    {
        std::lock_guard lk(m);
        draining = true;
        if (parked >= 0) release(parked);
        if (gate) gate->async_unlock([](std::error_code) {});
    }
    granted.wait_for(static_cast<std::size_t>(n));
    const double drain_s = seconds_since(drain_start);

    lock_stats counted;
    for (const auto& w : waiters) add_stats(counted, w->stats());
    std::size_t out_of_order = 0;
    for (std::size_t i = 1; i < grant_order.size(); ++i) out_of_order += grant_order[i] < grant_order[i - 1];

    auto j = zookeeper_line("waiters");
    if (o.mutex.lock_delay.count() > 0) j["lock_delay_ms"] = o.mutex.lock_delay.count();
    j["waiters"] = n;
    j["sessions"] = s;
    j["enqueue_s"] = enqueue_s;
    j["enqueue_per_s"] = n / enqueue_s;
    j["drain_s"] = drain_s;
    j["handoffs_per_s"] = (n - 1) / drain_s;
    j["attempts_per_grant"] = ratio(counted.attempts, counted.acquisitions);
    j["wakeups_per_grant"] = ratio(counted.wakeups, counted.acquisitions);
    j["full_listing_bytes"] = listing_bytes;
    j["rss_per_waiter_bytes"] = static_cast<double>(rss_queued - rss_before) / n;
    j["grants_out_of_fifo_order"] = out_of_order;
    j["errors"] = errors.size();
    print_result(j, o.json);
    if (!errors.empty()) return report_errors(errors, "acquire", o.session.connect);
    return out_of_order == 0 ? 0 : 1;
}

int bench_locks(const scale_bench_options& o) {
    const int n = std::max(1, o.locks);
    // What the completions use outlives the Session, whose end runs the ones
    // still queued, also when the bench leaves early by an exception.
    tally granted, released;
    std::mutex m;
    std::vector<std::error_code> errors;
    const auto note = [&](std::error_code ec) {
        if (!ec) return;
        std::lock_guard lk(m);
        errors.push_back(ec);
    };
    auto sessions = open_sessions(o.session, 1);
    auto& session = *sessions.front();
    const auto baselines = measure_baselines(o, session);
    const auto rss_before = resident_bytes();
    const auto heap_before = heap_in_use();
    std::vector<std::unique_ptr<Mutex>> locks;
    locks.reserve(static_cast<std::size_t>(n));

    const auto acquire_start = clock_type::now();
    const auto taken_by = run_on(o.on_session, session, [&] {
        for (int i = 0; i < n; ++i) {
            locks.push_back(std::make_unique<Mutex>(session, o.path + "/lock-" + std::to_string(i), o.mutex));
            locks.back()->async_lock([&](std::error_code ec) {
                note(ec);
                granted.add();
            });
        }
    });
    granted.wait_for(static_cast<std::size_t>(n));
    const double acquire_s = seconds_since(acquire_start);
    const auto rss_held = resident_bytes();
    const auto heap_held = heap_in_use();

    const auto release_start = clock_type::now();
    run_on(o.on_session, session, [&] {
        for (auto& l : locks)
            l->async_unlock([&](std::error_code ec) {
                note(ec);
                released.add();
            });
    });
    released.wait_for(static_cast<std::size_t>(n));
    const double release_s = seconds_since(release_start);

    auto j = zookeeper_line("locks");
    if (o.mutex.lock_delay.count() > 0) j["lock_delay_ms"] = o.mutex.lock_delay.count();
    j["locks"] = n;
    j["sessions"] = 1;
    // Where the locks were made and taken: the glibc arena their allocations
    // come from, which sets the RSS (docs/benchmarks.md).
    j["taken_on"] = taken_by == std::this_thread::get_id() ? "bench thread" : "session executor";
    j["acquire_all_s"] = acquire_s;
    j["acquires_per_s"] = n / acquire_s;
    j["release_all_s"] = release_s;
    j["releases_per_s"] = n / release_s;
    j["cycles_per_s"] = n / (acquire_s + release_s);
    j["rss_per_lock_bytes"] = static_cast<double>(rss_held - rss_before) / n;
    // A replaced allocator (a sanitizer's) leaves mallinfo2 at zero: no figure then.
    if (heap_before > 0) j["heap_per_lock_bytes"] = static_cast<double>(heap_held - heap_before) / n;
    j["errors"] = errors.size();
    add_baselines(o, baselines, j);
    print_result(j, o.json);
    if (!errors.empty()) return report_errors(errors, "operation", o.session.connect);
    return 0;
}

} // namespace zklock::cli
