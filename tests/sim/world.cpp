#include "world.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

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
    const auto waits = [this] {
        return !heap_.empty() || std::any_of(readers_.begin(), readers_.end(), [](const reader& r) { return bool(r.ready); });
    };
    while (waits() || !processes_.empty()) {
        auto slots = std::move(slots_);
        slots_.clear();
        heap_.clear();
        free_slots_.clear();
        stale_ = 0;
        auto readers = std::move(readers_);
        readers_.clear();
        slots.clear();
        readers.clear();
        if (!waits()) {
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

void world::push(pending p) {
    heap_.push_back(p);
    std::push_heap(heap_.begin(), heap_.end(), later);
}

std::uint64_t world::at(nanos when, int process, std::function<void()> fn) {
    if (when < now_) when = now_;
    std::uint32_t index;
    if (!free_slots_.empty()) {
        index = free_slots_.back();
        free_slots_.pop_back();
    } else {
        if (slots_.size() >= (std::size_t{1} << slot_bits)) throw std::length_error("sim: too many pending events");
        index = static_cast<std::uint32_t>(slots_.size());
        slots_.emplace_back();
    }
    const auto seq = next_seq_++;
    auto& s = slots_[index];
    s.seq = seq;
    s.process = process;
    s.fn = std::move(fn);
    push(pending{when, seq, index});
    return (seq << slot_bits) | index;
}

void world::cancel(std::uint64_t id) {
    const auto index = static_cast<std::size_t>(id & ((std::uint64_t{1} << slot_bits) - 1));
    if (index >= slots_.size() || slots_[index].seq != id >> slot_bits) return;
    auto& s = slots_[index];
    s.seq = 0;
    const auto fn = std::move(s.fn);  // destroyed here, after the slot is free
    s.fn = nullptr;
    free_slots_.push_back(static_cast<std::uint32_t>(index));
    // Its heap entry stays until it comes up; many such: rebuild the heap.
    if (++stale_ > 256 && stale_ > heap_.size() / 2) {
        std::erase_if(heap_, [this](const pending& p) { return slots_[p.slot].seq != p.seq; });
        std::make_heap(heap_.begin(), heap_.end(), later);
        stale_ = 0;
    }
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
    if (fd < 0) return;
    if (static_cast<std::size_t>(fd) >= readers_.size()) readers_.resize(static_cast<std::size_t>(fd) + 1);
    readers_[static_cast<std::size_t>(fd)] = reader{current_, std::move(ready)};
}

void world::cancel_readable(int fd) {
    if (fd >= 0 && static_cast<std::size_t>(fd) < readers_.size()) {
        const auto gone = std::move(readers_[static_cast<std::size_t>(fd)].ready);
        readers_[static_cast<std::size_t>(fd)].ready = nullptr;
    }
}

void world::readable(int fd) {
    if (fd < 0 || static_cast<std::size_t>(fd) >= readers_.size() || !readers_[static_cast<std::size_t>(fd)].ready) return;
    auto& r = readers_[static_cast<std::size_t>(fd)];
    const int p = r.process;
    auto fn = std::move(r.ready);
    r.ready = nullptr;
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
    for (;;) {
        if (heap_.empty()) return false;
        std::pop_heap(heap_.begin(), heap_.end(), later);
        const auto top = heap_.back();
        heap_.pop_back();
        auto& s = slots_[top.slot];
        if (s.seq != top.seq) {  // cancelled
            --stale_;
            continue;
        }
        now_ = top.when;
        // An event of a paused process waits for its end.
        if (s.process >= 0 && processes_.at(s.process)->paused_until > now_) {
            push(pending{processes_.at(s.process)->paused_until, top.seq, top.slot});
            return true;
        }
        const int process = s.process;
        auto fn = std::move(s.fn);
        s.fn = nullptr;
        s.seq = 0;
        free_slots_.push_back(top.slot);
        as(process, fn);
        wake(process);
        return true;
    }
}

void world::note(std::string line) {
    journal_.push_back(std::to_string(now_ / 1000) + "us " + std::move(line));
}

} // namespace zklock::sim
