// The safe-time budget's rule without a server (src/fsm/safe_time.hpp).
#include "fsm/safe_time.hpp"

#include <gtest/gtest.h>

#include <zookeeper.h>

#include <chrono>

using namespace std::chrono_literals;
using namespace zklock::detail;

TEST(SafeTime, OnlyTheServersAnswersCount) {
    for (const int rc : {ZOK, ZNONODE, ZNODEEXISTS, ZBADVERSION, ZNOAUTH, ZNOTEMPTY, ZTHROTTLEDOP})
        EXPECT_TRUE(server_answered(rc)) << rc;
    for (const int rc : {ZCONNECTIONLOSS, ZOPERATIONTIMEOUT, ZSESSIONEXPIRED, ZCLOSING, ZINVALIDSTATE, ZSESSIONMOVED,
                         ZAUTHFAILED, ZMARSHALLINGERROR, ZSYSTEMERROR, ZRUNTIMEINCONSISTENCY, ZAPIERROR})
        EXPECT_FALSE(server_answered(rc)) << rc;
}

TEST(SafeTime, TheSessionLivesATimeoutAfterTheSendOfTheNewestAnsweredRequestLessOnePercent) {
    const std::chrono::steady_clock::time_point heard{10s};
    EXPECT_EQ(safe_until(heard, 2000ms), heard + 2000ms - 20ms);
    EXPECT_EQ(safe_until(heard, 40000ms), heard + 40000ms - 400ms);
    EXPECT_EQ(safe_margin(50ms), 1ms) << "at least a millisecond";
    EXPECT_EQ(safe_margin(102ms), 1020us) << "1% exactly, not in whole milliseconds";
    EXPECT_EQ(safe_until({}, 2000ms), std::chrono::steady_clock::time_point{}) << "nothing heard: nothing safe";
    EXPECT_EQ(safe_until(heard, 0ms), std::chrono::steady_clock::time_point{}) << "no timeout negotiated yet";
}
