// Shared helpers of the fault-kit tests: skipping without iptables, and
// checking that a test left nothing of the kit behind.
#pragma once

#include <zklock/testing/packet_filter.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace zklock::test {

/// Threads of this process whose name (comm) is `name`.
inline std::size_t threads_named(const std::string& name) {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
        std::ifstream in(task.path() / "comm");
        std::string comm;
        std::getline(in, comm);
        if (comm == name) ++n;
    }
    return n;
}

/// Nothing the fault kit makes is left: no iptables rule of this process
/// (when iptables can be asked), no link thread, no timed-resume thread.
inline void expect_no_fault_leftovers() {
    if (!testing::PacketFilter::unavailable()) {
        const auto rules = testing::zklock_packet_rules(::getpid());
        EXPECT_TRUE(rules.empty()) << rules.size() << " zklock iptables rule(s) left, e.g. " << rules.front();
    }
    EXPECT_EQ(threads_named("zklock-link"), 0u) << "a FaultyLink thread is left";
    EXPECT_EQ(threads_named("zklock-resume"), 0u) << "a pause_for() thread is left";
}

}  // namespace zklock::test

/// Skips the test (GTEST_SKIP) when iptables cannot be changed here.
#define ZKLOCK_REQUIRE_IPTABLES()                                                                      \
    do {                                                                                               \
        if (const auto why = ::zklock::testing::PacketFilter::unavailable())                           \
            GTEST_SKIP() << "needs iptables and root (CAP_NET_ADMIN): " << *why;                       \
    } while (false)
