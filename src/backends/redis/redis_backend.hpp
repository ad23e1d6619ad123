// One Lock of a RedisLockService or RedlockService (a single Redis server is
// Redlock with one master): a key_lease_backend whose rounds run a script on
// every master. Its parts live in three files:
//   redis_backend.cpp   the scripts sent to every master, release
//   redis_acquire.cpp   acquire rounds, waiting on the release channel, backoff
//   redis_watchdog.cpp  the held lease's renewal
// The decisions over the masters' answers are redlock.hpp's.
#pragma once

#include "backends/key_lease/key_lease_backend.hpp"
#include "backends/redis/redis_context.hpp"
#include "backends/redis/redlock.hpp"

#include <zklock/lock.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::detail::redis {

/// The first and the largest wait between acquire rounds while no release
/// message comes (doubling, jittered, capped by the ttl).
inline constexpr std::chrono::milliseconds first_backoff{50};
inline constexpr std::chrono::milliseconds max_backoff{1000};

class redis_backend : public key_lease_backend<redis_backend, redis_context> {
public:
    redis_backend(std::shared_ptr<redis_context> ctx, std::string key);

    std::int64_t fencing_token() const noexcept override { return fence_.load(); }
    lock_capabilities capabilities() const noexcept override { return capabilities_of(ctx_->backend); }

private:
    friend class key_lease_backend<redis_backend, redis_context>;
    using result = redlock::master_reply;

    static constexpr const char* expired_text = "its lease ran out before a renewal reached a majority";
    static constexpr const char* taken_text = "its key no longer holds its token";

    std::size_t n() const noexcept { return ctx_->masters.size(); }
    std::vector<std::string> eval(const char* script, std::string arg1, std::string arg2) const;
    /// Sends `cmd` to every master; `done` gets one result per master once all answered.
    void on_all(std::vector<std::string> cmd, std::function<void(std::vector<result>)> done);
    /// Compare-and-delete on every master; `done` gets redlock::after_release's verdict.
    void release_everywhere(const std::string& token, std::function<void(std::error_code)> done, bool publish = true);
    void let_go(std::function<void(std::error_code)> done) { release_everywhere(token_, std::move(done)); }

    // acquire (redis_acquire.cpp)
    void attempt();
    void round_done(std::uint64_t op, const std::string& token, clock_type::time_point started,
                    const std::vector<result>& results);
    void round_failed(const redlock::round_tally& t);
    clock_type::duration next_backoff();
    void wake(const std::string* released_token);
    void register_waits();
    void unregister_waits();
    void grant(const std::string& token, long long fence, clock_type::time_point started);
    void acquire_ended(std::error_code) { unregister_waits(); }

    // hold (redis_watchdog.cpp)
    void tick();
    void renewal_done(std::uint64_t gen, clock_type::time_point started, const std::vector<result>& results);
    void hold_ended() { fence_ = 0; }

    const std::string fence_key_, channel_;
    // strand only
    bool round_in_flight_ = false, wake_pending_ = false, registered_ = false;
    std::string last_release_seen_;  // the token of the last release message counted as a wake-up
    bool renew_in_flight_ = false;
    // any thread
    std::atomic<std::int64_t> fence_{0};
};

} // namespace zklock::detail::redis
