// Critical sections stamped with CLOCK_MONOTONIC (one clock for every process on
// this machine) by zklock and by the peer clients of the interop tests, and the
// churn check they share: two correct holders' sections never overlap, and the
// checks compare stamps, never durations.
#pragma once

#include "grant_support.hpp"
#include "support.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace zklock::test {

/// One critical section: [acquire returned, release asked for], monotonic ns.
/// `who` starts with the client's kind ("zklock", "kazoo", "curator", "go").
struct section {
    std::string who;
    std::int64_t enter = 0;
    std::int64_t leave = 0;
};

/// Every pair of sections that overlap, in words; empty when none do.
inline std::vector<std::string> overlaps(std::vector<section> all) {
    std::sort(all.begin(), all.end(), [](const section& a, const section& b) { return a.enter < b.enter; });
    std::vector<std::string> out;
    for (std::size_t i = 1; i < all.size(); ++i) {
        // Compare with the latest-ending earlier section, not only the previous one.
        const auto prev = std::max_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(i),
                                           [](const section& a, const section& b) { return a.leave < b.leave; });
        if (all[i].enter <= prev->leave)
            out.push_back(all[i].who + " entered " + std::to_string(prev->leave - all[i].enter) + " ns before " +
                          prev->who + " left");
    }
    return out;
}

/// One zklock Mutex client per session takes the lock at `path` `rounds` times,
/// making a server round trip while it holds; returns every client's sections
/// ("zklock N") once all are done. A client that gets no lock within 60 s or
/// fails stops, and the failure is reported.
inline std::vector<section> zklock_churn(const std::vector<std::unique_ptr<Session>>& sessions,
                                         const std::string& path, int rounds) {
    std::mutex m;
    std::vector<section> out;
    std::vector<std::string> errors;
    {
        std::vector<std::jthread> clients;
        for (std::size_t c = 0; c < sessions.size(); ++c) {
            clients.emplace_back([&, c] {
                try {
                    Mutex mutex(*sessions[c], path);
                    for (int i = 0; i < rounds; ++i) {
                        if (!mutex.try_lock_for(60s)) throw std::runtime_error("no lock within 60 s");
                        const auto enter = monotonic_ns();
                        (void)mutex.contenders();  // a server round trip while holding
                        const auto leave = monotonic_ns();
                        mutex.unlock();
                        std::lock_guard lk(m);
                        out.push_back({"zklock " + std::to_string(c), enter, leave});
                    }
                } catch (const std::exception& e) {
                    std::lock_guard lk(m);
                    errors.push_back(e.what());
                }
            });
        }
    }  // joins the clients
    EXPECT_TRUE(errors.empty()) << errors.front();
    return out;
}

/// The sections of a churn of zklock clients with clients of kind `peer`: no two
/// overlap, and the kinds took turns both ways (each followed the other at least
/// once), so they did contend.
inline void expect_turns_without_overlap(std::vector<section> all, const std::string& peer) {
    std::sort(all.begin(), all.end(), [](const section& a, const section& b) { return a.enter < b.enter; });
    int peer_then_zklock = 0, zklock_then_peer = 0;
    for (std::size_t i = 1; i < all.size(); ++i) {
        const bool was_peer = all[i - 1].who.starts_with(peer), is_peer = all[i].who.starts_with(peer);
        peer_then_zklock += was_peer && !is_peer;
        zklock_then_peer += !was_peer && is_peer;
    }
    EXPECT_GT(peer_then_zklock, 0) << "zklock never followed " << peer;
    EXPECT_GT(zklock_then_peer, 0) << peer << " never followed zklock";
    const auto overlapping = overlaps(all);
    EXPECT_TRUE(overlapping.empty()) << overlapping.size() << " overlapping critical sections among " << all.size()
                                     << ", e.g. " << overlapping.front();
}

} // namespace zklock::test
