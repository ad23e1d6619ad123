// What the scheduler did for the bench's own threads over a measured loop:
// their time on a CPU, their time runnable but waiting for one (the run
// queue), and how often they were put on a CPU, from the kernel's
// /proc/self/task/*/schedstat, read before and after the loop. On a busy host
// the run queue is where a client loses time: each time one of its threads
// sleeps (on a socket, on another thread's result) and is woken, it queues
// behind whatever else is runnable. So a row can say, per cycle, whether a
// client lost more than another under the same load, and why: more wake-ups,
// or a longer wait for each.
//
// Only threads alive at both readings count (a thread started and ended
// within the loop is not seen), which is why only loops whose threads outlive
// them are read: zklock's uncontended loop (the caller and the Session's
// thread) and the floor's (one thread).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

namespace zklock::cli {

/// One thread's figures from the scheduler, since the thread began.
struct thread_schedule {
    std::uint64_t cpu_ns = 0;   ///< time on a CPU
    std::uint64_t wait_ns = 0;  ///< time runnable, waiting for a CPU
    std::uint64_t runs = 0;     ///< times put on a CPU
};

/// A schedstat line ("cpu_ns wait_ns runs"); nothing when it is not three numbers.
std::optional<thread_schedule> parse_schedstat(std::string_view line);

/// This process's threads by thread id; empty where /proc cannot be read.
using process_schedule = std::map<long, thread_schedule>;
process_schedule read_process_schedule();

/// The figures per cycle between two readings, over the threads in both:
/// {"client_cpu_us_per_cycle", "client_wait_us_per_cycle",
/// "client_runs_per_cycle"}; null when `cycles` is 0 or no thread is in both.
nlohmann::json schedule_per_cycle(const process_schedule& before, const process_schedule& after, std::uint64_t cycles);

}  // namespace zklock::cli
