// The simulated world: one clock, one queue of events, the simulated
// processes (each with its own io_context and a clock up to 1% fast or slow)
// and one seeded random source. Single-threaded: nothing here reads a real
// clock, sleeps or starts a thread, so a seed replays its run exactly.
#pragma once

#include "sim_seam.hpp"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace zklock::sim {

using nanos = std::int64_t;
constexpr nanos ms(std::int64_t n) { return n * 1'000'000; }

class world final : public clock_hooks {
public:
    explicit world(std::uint64_t seed);
    ~world();
    world(const world&) = delete;
    world& operator=(const world&) = delete;

    /// Destroys every pending event, wait and process (their handlers with
    /// them) while the hooks are still this world's.
    void shutdown();

    nanos now() const noexcept { return now_; }
    std::mt19937_64& rng() noexcept { return rng_; }
    /// A number in [lo, hi].
    std::int64_t uniform(std::int64_t lo, std::int64_t hi);
    bool chance(double p);

    /// A process whose clock runs `ppm` parts per million fast (negative: slow).
    int add_process(std::int64_t ppm);
    boost::asio::io_context& io(int process) { return processes_.at(process)->ioc; }
    /// While paused, the process runs nothing (its clock goes on).
    void pause(int process, nanos until);
    int current() const noexcept { return current_; }
    /// Process p may have handlers ready (run_ready polls only such processes).
    void wake(int p) {
        if (p >= 0) processes_.at(static_cast<std::size_t>(p))->ready = true;
    }
    /// Runs fn as process p (its clock, its alarms); call wake(p) if fn may post.
    template <class F> void as(int p, F&& fn) {
        const int prev = std::exchange(current_, p);
        fn();
        current_ = prev;
    }
    nanos local_of(int process, nanos global) const;

    /// Runs fn at global time `when` as process `process` (-1: the servers).
    std::uint64_t at(nanos when, int process, std::function<void()> fn);
    void cancel(std::uint64_t id);
    /// Runs every process's ready handlers until none is ready; then the next
    /// event. False when no event is left.
    bool step();
    void run_ready();

    /// The schedule: what happened, for a failure's report.
    void note(std::string line);
    /// The simulator broke a promise of its own (a run is then void).
    void model_error(std::string what) {
        if (model_error_.empty()) model_error_ = std::move(what);
    }
    const std::string& model_error() const noexcept { return model_error_; }
    /// Notes every request and reply too (ZKLOCK_SIM_VERBOSE: a replayed seed's detail).
    bool verbose = false;
    const std::vector<std::string>& journal() const noexcept { return journal_; }

    // clock_hooks
    time_point local_now() override;
    std::uint64_t set_alarm(time_point local, std::function<void()> fire) override;
    void cancel_alarm(std::uint64_t id) override { cancel(id); }
    std::uint64_t random() override { return rng_(); }
    void wait_readable(int fd, std::function<void()> ready) override;
    void cancel_readable(int fd) override;

    /// The simulated C client: says that `fd` has something to read now.
    void readable(int fd);
    /// The simulated C client: whether `fd` has something to read now.
    std::function<bool(int fd)> has_input;

private:
    struct process {
        std::int64_t ppm = 0;
        nanos offset = 0;
        nanos paused_until = 0;
        bool ready = false;  // may have handlers to run
        boost::asio::io_context ioc;
    };
    // The queue of events: a binary min-heap of (time, sequence) over slots
    // that hold the handlers. An event's id names its slot and sequence;
    // cancel() destroys its handler at once and leaves its heap entry to be
    // skipped. No node is allocated per event once the vectors have grown.
    struct pending {
        nanos when;
        std::uint64_t seq;  // order among events of one instant: first scheduled, first run
        std::uint32_t slot;
    };
    struct slot {
        std::uint64_t seq = 0;  // 0: free
        int process = -1;
        std::function<void()> fn;
    };
    static constexpr int slot_bits = 24;
    static bool later(const pending& a, const pending& b) {
        return a.when != b.when ? a.when > b.when : a.seq > b.seq;
    }
    void push(pending p);
    nanos now_ = 0;
    int current_ = -1;
    std::mt19937_64 rng_;
    std::vector<std::unique_ptr<process>> processes_;
    std::uint64_t next_seq_ = 1;
    std::vector<pending> heap_;
    std::vector<slot> slots_;
    std::vector<std::uint32_t> free_slots_;
    std::size_t stale_ = 0;  // heap entries of cancelled events
    struct reader {
        int process = -1;
        std::function<void()> ready;  // empty: no wait
    };
    std::vector<reader> readers_;  // by descriptor
    std::vector<std::string> journal_;
    std::string model_error_;
    clock_hooks* previous_;
};

} // namespace zklock::sim
