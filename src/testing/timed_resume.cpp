#include "testing/timed_resume.hpp"

#include <pthread.h>
#include <signal.h>

namespace zklock::testing::detail {

TimedResume::TimedResume(std::vector<pid_t> targets, std::chrono::milliseconds after) {
    const auto deadline = std::chrono::steady_clock::now() + after;
    thread_ = std::thread([this, targets = std::move(targets), deadline] {
        std::unique_lock lk(m_);
        if (cv_.wait_until(lk, deadline, [this] { return cancelled_; })) return;
        for (const pid_t target : targets) ::kill(target, SIGCONT);
        fired_ = true;
    });
    ::pthread_setname_np(thread_.native_handle(), "zklock-resume");
}

TimedResume::~TimedResume() { cancel(); }

bool TimedResume::cancel() noexcept {
    {
        std::lock_guard lk(m_);
        cancelled_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
}

}  // namespace zklock::testing::detail
