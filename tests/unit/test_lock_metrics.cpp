// lock_metrics: lock events counted per path, in the Prometheus text format.
#include <zklock/error.hpp>
#include <zklock/lock_events.hpp>

#include <gtest/gtest.h>

using namespace zklock;
using namespace std::chrono_literals;

namespace {

lock_event event(lock_event_kind kind, std::string path) {
    lock_event e;
    e.kind = kind;
    e.path = std::move(path);
    return e;
}

} // namespace

TEST(LockMetrics, CountsGrantsWaitsHoldsLossesRevocationRequestsAndTheGauges) {
    lock_metrics m;
    auto q = event(lock_event_kind::queued, "/locks/a");
    m.record(q);
    m.record(q);
    auto g = event(lock_event_kind::granted, "/locks/a");
    g.waited = 1500ms;
    m.record(g);
    auto r = event(lock_event_kind::released, "/locks/a");
    r.held = 250ms;
    m.record(r);
    m.record(event(lock_event_kind::left, "/locks/a"));  // the second acquire gave up
    m.record(event(lock_event_kind::queued, "/locks/b\"q\\"));
    auto gb = event(lock_event_kind::granted, "/locks/b\"q\\");
    m.record(gb);
    auto asked = event(lock_event_kind::revocation_requested, "/locks/b\"q\\");
    asked.reason = make_error_code(errc::revoked);
    m.record(asked);  // counted; holding, waiting and losses unchanged
    auto lost = event(lock_event_kind::lost, "/locks/b\"q\\");
    lost.held = 2s;
    lost.reason = make_error_code(errc::node_deleted);
    m.record(lost);

    const std::string expected =
        "# HELP zklock_lock_acquisitions_total Acquisitions granted.\n"
        "# TYPE zklock_lock_acquisitions_total counter\n"
        "zklock_lock_acquisitions_total{path=\"/locks/a\"} 1\n"
        "zklock_lock_acquisitions_total{path=\"/locks/b\\\"q\\\\\"} 1\n"
        "# HELP zklock_lock_wait_seconds_total Time from acquire to grant, summed over the grants.\n"
        "# TYPE zklock_lock_wait_seconds_total counter\n"
        "zklock_lock_wait_seconds_total{path=\"/locks/a\"} 1.5\n"
        "zklock_lock_wait_seconds_total{path=\"/locks/b\\\"q\\\\\"} 0\n"
        "# HELP zklock_lock_hold_seconds_total Time held, summed over the holds that ended.\n"
        "# TYPE zklock_lock_hold_seconds_total counter\n"
        "zklock_lock_hold_seconds_total{path=\"/locks/a\"} 0.25\n"
        "zklock_lock_hold_seconds_total{path=\"/locks/b\\\"q\\\\\"} 2\n"
        "# HELP zklock_lock_losses_total Holds that ended without an unlock.\n"
        "# TYPE zklock_lock_losses_total counter\n"
        "zklock_lock_losses_total{path=\"/locks/a\"} 0\n"
        "zklock_lock_losses_total{path=\"/locks/b\\\"q\\\\\"} 1\n"
        "# HELP zklock_lock_revocation_requests_total Revocation requests that arrived while held (honoured or not).\n"
        "# TYPE zklock_lock_revocation_requests_total counter\n"
        "zklock_lock_revocation_requests_total{path=\"/locks/a\"} 0\n"
        "zklock_lock_revocation_requests_total{path=\"/locks/b\\\"q\\\\\"} 1\n"
        "# HELP zklock_lock_waiting Acquires in the queue, not yet granted.\n"
        "# TYPE zklock_lock_waiting gauge\n"
        "zklock_lock_waiting{path=\"/locks/a\"} 0\n"
        "zklock_lock_waiting{path=\"/locks/b\\\"q\\\\\"} 0\n"
        "# HELP zklock_lock_held Holds in progress.\n"
        "# TYPE zklock_lock_held gauge\n"
        "zklock_lock_held{path=\"/locks/a\"} 0\n"
        "zklock_lock_held{path=\"/locks/b\\\"q\\\\\"} 0\n";
    EXPECT_EQ(m.prometheus_text(), expected);
}

TEST(LockMetrics, GaugesFollowWaitersAndHolders) {
    lock_metrics m;
    const auto h = m.handler();
    h(event(lock_event_kind::queued, "/l"));
    h(event(lock_event_kind::queued, "/l"));
    h(event(lock_event_kind::granted, "/l"));
    const auto text = m.prometheus_text();
    EXPECT_NE(text.find("zklock_lock_waiting{path=\"/l\"} 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("zklock_lock_held{path=\"/l\"} 1\n"), std::string::npos) << text;
}
