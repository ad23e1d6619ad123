// The "resuming by itself" half of FaultableProcess::pause_for(): a thread that
// sends SIGCONT to a fixed list of processes once a deadline passes, unless
// cancelled first.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace zklock::testing::detail {

class TimedResume {
public:
    /// Sends SIGCONT to every target after `after`: a target > 0 is a process,
    /// < 0 the process group -target (as kill(2)). The owner must not reap a
    /// target before cancel() or fired(): the pids stay valid meanwhile.
    TimedResume(std::vector<pid_t> targets, std::chrono::milliseconds after);
    /// cancel().
    ~TimedResume();
    TimedResume(const TimedResume&) = delete;
    TimedResume& operator=(const TimedResume&) = delete;

    /// True once the SIGCONTs have been sent.
    [[nodiscard]] bool fired() const noexcept { return fired_.load(); }
    /// Stops the thread (without sending anything if the deadline has not
    /// passed) and joins it. Returns fired(). Never throws.
    bool cancel() noexcept;

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool cancelled_ = false;
    std::atomic<bool> fired_{false};
    std::thread thread_;
};

}  // namespace zklock::testing::detail
