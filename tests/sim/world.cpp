#include "world.hpp"

#include <stdexcept>

namespace zklock::sim {

namespace {
clock_hooks* hooks_now = nullptr;
}

clock_hooks*& current_hooks() noexcept { return hooks_now; }

world::world(std::uint64_t seed) : rng_(seed), previous_(current_hooks()) { current_hooks() = this; }

world::~world() {
    shutdown();
    current_hooks() = previous_;
}

void world::shutdown() {
    // Destroying a handler may destroy a session, which cancels its timers
    // and waits: take everything out before it goes.
    while (!queue_.empty() || !readers_.empty() || !processes_.empty()) {
        auto queue = std::move(queue_);
        queue_.clear();
        events_.clear();
        auto readers = std::move(readers_);
        readers_.clear();
        queue.clear();
        readers.clear();
        if (queue_.empty() && readers_.empty()) {
            auto processes = std::move(processes_);
            processes_.clear();
            for (std::size_t i = 0; i < processes.size(); ++i) as(static_cast<int>(i), [&] { processes[i].reset(); });
        }
    }
}

std::int64_t world::uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
}

bool world::chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

int world::add_process(std::int64_t ppm) {
    auto p = std::make_unique<process>();
    p->ppm = ppm;
    // Each process's clock starts somewhere else: nothing may compare two.
    p->offset = uniform(0, ms(1'000'000));
    processes_.push_back(std::move(p));
    return static_cast<int>(processes_.size()) - 1;
}

void world::pause(int process, nanos until) {
    processes_.at(process)->paused_until = until;
    at(until, process, [] {});  // its end wakes it
}

nanos world::local_of(int process, nanos global) const {
    if (process < 0) return global;
    const auto& p = *processes_.at(process);
    // global * (1 + ppm / 1e6), monotonic in global.
    return p.offset + global + (global / 1000) * p.ppm / 1000;
}

world::time_point world::local_now() { return time_point(std::chrono::nanoseconds(local_of(current_, now_))); }

std::uint64_t world::at(nanos when, int process, std::function<void()> fn) {
    if (when < now_) when = now_;
    const auto id = next_id_++;
    const auto key = std::make_pair(when, id);
    queue_.emplace(key, event{process, std::move(fn)});
    events_.emplace(id, key);
    return id;
}

void world::cancel(std::uint64_t id) {
    const auto it = events_.find(id);
    if (it == events_.end()) return;
    queue_.erase(it->second);
    events_.erase(it);
}

std::uint64_t world::set_alarm(time_point local, std::function<void()> fire) {
    const nanos target = std::chrono::duration_cast<std::chrono::nanoseconds>(local.time_since_epoch()).count();
    // The first global instant at which the process's clock reads `target`.
    nanos lo = now_, hi = now_;
    nanos span = 1'000'000;
    while (local_of(current_, hi) < target) {
        lo = hi;
        hi += span;
        span *= 2;
    }
    while (lo < hi) {
        const nanos mid = lo + (hi - lo) / 2;
        if (local_of(current_, mid) >= target) hi = mid;
        else lo = mid + 1;
    }
    return at(hi, current_, std::move(fire));
}

void world::wait_readable(int fd, std::function<void()> ready) {
    if (has_input && has_input(fd)) {
        ready();
        return;
    }
    readers_[fd] = {current_, std::move(ready)};
}

void world::readable(int fd) {
    const auto it = readers_.find(fd);
    if (it == readers_.end()) return;
    auto [p, fn] = std::move(it->second);
    readers_.erase(it);
    as(p, fn);
    wake(p);
}

void world::run_ready() {
    // A process's handlers post only to its own io_context, and only events
    // run as a process (or the runner, which wakes it) make it ready.
    for (bool again = true; again;) {
        again = false;
        for (std::size_t i = 0; i < processes_.size(); ++i) {
            auto& p = *processes_[i];
            if (!p.ready || p.paused_until > now_) continue;
            p.ready = false;
            std::size_t ran = 0;
            as(static_cast<int>(i), [&] {
                p.ioc.restart();
                ran = p.ioc.poll();
            });
            if (ran > 0) {
                p.ready = true;
                again = true;
            }
        }
    }
}

bool world::step() {
    run_ready();
    if (queue_.empty()) return false;
    auto it = queue_.begin();
    auto [key, ev] = std::move(*it);
    queue_.erase(it);
    events_.erase(key.second);
    now_ = key.first;
    // An event of a paused process waits for its end.
    if (ev.process >= 0 && processes_.at(ev.process)->paused_until > now_) {
        const auto k = std::make_pair(processes_.at(ev.process)->paused_until, key.second);
        queue_.emplace(k, std::move(ev));
        events_.emplace(key.second, k);
        return true;
    }
    as(ev.process, ev.fn);
    wake(ev.process);
    return true;
}

void world::note(std::string line) {
    journal_.push_back(std::to_string(now_ / 1000) + "us " + std::move(line));
}

} // namespace zklock::sim
