// Shared parts of the chaos suite: a seed printed before anything runs, the
// run's summary line, and the pass conditions checked one by one.
#pragma once

#include "fault_support.hpp"
#include "support.hpp"

#include "chaos/chaos.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <string>

namespace zklock::test {

namespace zt = zklock::lab;

/// A chaos test: its seed ($ZKLOCK_CHAOS_SEED or fresh) is printed first, so a
/// failure is replayed with `ZKLOCK_CHAOS_SEED=N ctest -R <test>`. TearDown
/// stops the cluster (when the test left it) and checks that nothing of the
/// fault kit is left.
class ChaosTest : public ::testing::Test {
protected:
    void SetUp() override {
        seed_ = zt::chaos_seed();
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::cout << "[ chaos    ] " << info->test_suite_name() << "." << info->name() << ": "
                  << zt::describe_seed(seed_) << std::endl;
        RecordProperty("chaos_seed", std::to_string(seed_));
    }

    void TearDown() override {
        cluster_.reset();
        expect_no_fault_leftovers();
    }

    /// Starts the servers and connects the clients (workers not started).
    zt::ChaosCluster& make_cluster(zt::ChaosOptions o) {
        if (!o.log) o.log = [](const std::string& line) { std::cout << "[ chaos    ]   " << line << std::endl; };
        cluster_ = std::make_unique<zt::ChaosCluster>(std::move(o), seed_);
        return *cluster_;
    }

    /// Every client gets the lock again (bounded), the workers stop and
    /// release, the lock path empties; prints the summary line and checks
    /// every pass condition.
    zt::chaos_outcome finish_and_judge(std::chrono::milliseconds progress_timeout = std::chrono::seconds(30)) {
        auto stalled = cluster_->wait_for_progress(progress_timeout);
        // What each client was doing when the others went on without it.
        if (!stalled.empty())
            for (const auto& line : cluster_->describe_clients())
                std::cout << "[ chaos    ]   stalled: " << line << std::endl;
        auto outcome = cluster_->finish(std::move(stalled));
        std::cout << "[ chaos    ] " << zt::chaos_line(outcome) << " (seed " << seed_ << ")" << std::endl;
        for (const auto& v : zt::chaos_violations(outcome)) ADD_FAILURE() << v << " (" << zt::describe_seed(seed_) << ")";
        EXPECT_GT(outcome.summary.grants, 0u);
        return outcome;
    }

    std::uint64_t seed_ = 0;
    std::unique_ptr<zt::ChaosCluster> cluster_;
};

}  // namespace zklock::test
