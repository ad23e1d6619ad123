// The deterministic simulation: many schedules, each from its seed. A failing
// schedule prints its seed, the broken invariant and the schedule; replay one
// seed with ZKLOCK_SIM_SEED=<seed>. ZKLOCK_SIM_SCHEDULES sets how many run
// (the long mode: ZKLOCK_SIM_SCHEDULES=1000000 in a release build);
// ZKLOCK_SIM_VERBOSE=1 with a seed adds every request, reply and log line to
// its schedule.
#include "network.hpp"
#include "runner.hpp"
#include "world.hpp"
#include "zk_model.hpp"

#include <zklock/mutex.hpp>
#include <zklock/session.hpp>
#include <zklock/session_options.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace {

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

zklock::sim::sim_options options() {
    zklock::sim::sim_options o;
    o.verbose = std::getenv("ZKLOCK_SIM_VERBOSE") != nullptr;
    return o;
}

std::string report(std::uint64_t seed, const zklock::sim::schedule_result& r) {
    std::string out = "seed " + std::to_string(seed) + ": " + r.failure + "\nschedule (replay: ZKLOCK_SIM_SEED=" +
                      std::to_string(seed) + "):\n";
    for (const auto& line : r.journal) out += "  " + line + "\n";
    return out;
}

TEST(Simulation, SameSeedSameSchedule) {
    // Every request, reply and event of the run, in order and in simulated time.
    zklock::sim::sim_options verbose;
    verbose.verbose = true;
    const auto a = zklock::sim::run_schedule(7, verbose);
    const auto b = zklock::sim::run_schedule(7, verbose);
    ASSERT_GT(a.journal.size(), 100u);
    EXPECT_EQ(a.journal, b.journal);
    EXPECT_EQ(a.steps, b.steps);
}

TEST(Simulation, ATimedAcquireEndsAtItsDeadlineOnTheSimulatedClock) {
    // try_lock_for's deadline (made in the public header) is on the process's
    // simulated clock, as every other time of the library: behind a holder
    // that keeps its lock, a wait of 250 ms ends, not acquired, once 250 ms of
    // the waiter's time have passed, and no sooner. (On the real clock it
    // passes at once or long after the run, by the machine's uptime.)
    using namespace zklock;
    using namespace zklock::sim;
    world w(1);
    zk_server server(w);
    attach_network(w, server, network_options{});
    struct party {
        int process = 0;
        std::unique_ptr<Session> session;
        std::unique_ptr<Mutex> mutex;
    };
    party holder, waiter;
    for (auto* p : {&holder, &waiter}) {
        p->process = w.add_process(0);
        w.as(p->process, [&] {
            SessionOptions o;
            o.connect = "127.0.0.1:2181";
            o.session_timeout = std::chrono::seconds(10);
            p->session = std::make_unique<Session>(w.io(p->process).get_executor(), o);
            p->mutex = std::make_unique<Mutex>(*p->session, "/sim/deadline");
        });
        w.wake(p->process);
    }
    bool held = false;
    std::optional<std::error_code> waited;
    bool acquired = true;
    nanos asked_at = 0, ended_at = 0;
    w.as(holder.process, [&] { holder.mutex->async_lock([&](std::error_code ec) { held = !ec; }); });
    w.wake(holder.process);
    while (!held && w.now() < ms(30'000) && w.step()) w.run_ready();
    ASSERT_TRUE(held) << "the holder's acquire did not complete";
    asked_at = w.now();
    w.as(waiter.process, [&] {
        waiter.mutex->async_try_lock_for(std::chrono::milliseconds(250), [&](std::error_code ec, bool got) {
            waited = ec;
            acquired = got;
            ended_at = w.now();
        });
    });
    w.wake(waiter.process);
    while (!waited && w.now() < asked_at + ms(30'000) && w.step()) w.run_ready();
    ASSERT_TRUE(waited) << "the wait did not end within 30 s of simulated time";
    EXPECT_FALSE(*waited) << waited->message();
    EXPECT_FALSE(acquired);
    EXPECT_GE(ended_at - asked_at, ms(250));
    // Its end: the deadline's alarm, then leaving the queue (a delete's round trip).
    EXPECT_LT(ended_at - asked_at, ms(250) + ms(100));
    for (auto* p : {&waiter, &holder}) {
        w.as(p->process, [&] {
            p->mutex.reset();
            p->session.reset();
        });
        w.wake(p->process);
    }
    w.run_ready();
    w.shutdown();
    detach_network();
}

TEST(Simulation, AnAcquireGivenUpFindsItsNodeOnAServerThatLagsTheCreate) {
    // The create of an acquire reaches the leader, and its connection closes
    // before the reply; the acquire is cancelled, and the session comes back
    // on a follower that has not applied the create. The session then finds
    // the node by its guid to delete it: its listing must follow a sync, or
    // the follower's view hides the node, and it stays (first in the queue
    // once the holder leaves) for as long as the session lives.
    using namespace zklock;
    using namespace zklock::sim;
    world w(1);
    w.verbose = true;
    zk_server server(w);
    server.add_follower(ms(20));
    attach_network(w, server, network_options{});
    route_connections(0);
    struct party {
        int process = 0;
        std::unique_ptr<Session> session;
        std::unique_ptr<Mutex> mutex;
    };
    const std::string lock = "/sim/lagging";
    party holder, giver;
    for (auto* p : {&holder, &giver}) {
        p->process = w.add_process(0);
        w.as(p->process, [&] {
            SessionOptions o;
            o.connect = "127.0.0.1:2181";
            o.session_timeout = std::chrono::seconds(10);
            p->session = std::make_unique<Session>(w.io(p->process).get_executor(), o);
            p->mutex = std::make_unique<Mutex>(*p->session, lock);
        });
        w.wake(p->process);
    }
    bool held = false;
    w.as(holder.process, [&] { holder.mutex->async_lock([&](std::error_code ec) { held = !ec; }); });
    w.wake(holder.process);
    const auto run_until = [&](auto done, nanos within) {
        const auto until = w.now() + within;
        while (!done() && w.now() < until && w.step()) w.run_ready();
        return done();
    };
    ASSERT_TRUE(run_until([&] { return held && giver.session->session_id() != 0; }, ms(30'000)));
    // The giver tries once (so its session knows the directory is there:
    // its next acquire's first write is its create).
    std::optional<bool> tried;
    w.as(giver.process, [&] { giver.mutex->async_try_lock([&](std::error_code, bool got) { tried = got; }); });
    w.wake(giver.process);
    ASSERT_TRUE(run_until([&] { return tried.has_value(); }, ms(30'000)));
    ASSERT_FALSE(*tried);
    ASSERT_TRUE(run_until([&] { return server.applied(1) == server.last_zxid(); }, ms(30'000)));
    server.hold(1, true);
    route_connections(1);
    const auto sid = giver.session->session_id();
    const auto giver_nodes = [&] {
        std::size_t n = 0;
        for (const auto& [path, node] : server.nodes())
            if (path.starts_with(lock + "/") && node.stat.ephemeralOwner == sid) ++n;
        return n;
    };
    drop_after_next_request(sid);
    boost::asio::cancellation_signal cancel;
    std::optional<std::error_code> given_up;
    w.as(giver.process, [&] {
        giver.mutex->async_lock(
            boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec) { given_up = ec; }));
    });
    w.wake(giver.process);
    ASSERT_TRUE(run_until([&] { return giver_nodes() == 1; }, ms(30'000))) << "the create did not reach the leader";
    w.as(giver.process, [&] { cancel.emit(boost::asio::cancellation_type::terminal); });
    w.wake(giver.process);
    ASSERT_TRUE(run_until([&] { return given_up.has_value(); }, ms(30'000)));
    EXPECT_EQ(*given_up, std::errc::operation_canceled) << given_up->message();
    const bool gone = run_until([&] { return giver_nodes() == 0 && server.server_of(sid) == 1; }, ms(30'000));
    std::string journal;
    if (!gone)
        for (const auto& line : w.journal()) journal += "  " + line + "\n";
    EXPECT_TRUE(gone) << "the given-up acquire's node is still there, " << giver_nodes()
                      << " of it, with its session on server " << server.server_of(sid) << ":\n" << journal;
    for (auto* p : {&giver, &holder}) {
        w.as(p->process, [&] {
            p->mutex.reset();
            p->session.reset();
        });
        w.wake(p->process);
    }
    w.run_ready();
    detach_network();
}

TEST(Simulation, SeedsThatOnceFailedKeepEveryInvariant) {
    // Beyond the test run's range, each caught a bug of the library in the
    // long mode (the schedule they draw holds only as long as the runner's
    // draws stay as they were).
    const std::uint64_t seeds[] = {
        21007,  // a lock set's acquire given up after its create's reply was lost: its nodes deleted one by one
        33813,  // lock-delay: a node made and gone between the directory's read and our create went unseen
    };
    for (const auto seed : seeds) {
        const auto r = zklock::sim::run_schedule(seed, options());
        EXPECT_TRUE(r.ok) << report(seed, r);
    }
}

TEST(Simulation, SchedulesKeepEveryInvariant) {
    if (const char* one = std::getenv("ZKLOCK_SIM_SEED"); one && *one) {
        const auto seed = std::strtoull(one, nullptr, 10);
        const auto r = zklock::sim::run_schedule(seed, options());
        ASSERT_TRUE(r.ok) << report(seed, r);
        return;
    }
    const auto count = env_number("ZKLOCK_SIM_SCHEDULES", 5000);
    const auto first = env_number("ZKLOCK_SIM_FIRST_SEED", 1);
    std::uint64_t grants = 0, steps = 0;
    // Every schedule runs; the first failure is reported whole, the others by seed.
    std::string first_failure;
    std::vector<std::uint64_t> failed;
    for (std::uint64_t seed = first; seed < first + count; ++seed) {
        const auto r = zklock::sim::run_schedule(seed, options());
        if (!r.ok) {
            if (failed.empty()) first_failure = report(seed, r);
            failed.push_back(seed);
            if (failed.size() <= 50) std::printf("seed %llu: %s\n", static_cast<unsigned long long>(seed), r.failure.c_str());
        }
        grants += r.grants;
        steps += r.steps;
    }
    std::string seeds;
    for (std::size_t i = 0; i < failed.size() && i < 50; ++i) seeds += " " + std::to_string(failed[i]);
    EXPECT_TRUE(failed.empty()) << failed.size() << " schedules failed (seeds" << seeds << ")\n" << first_failure;
    RecordProperty("schedules", std::to_string(count));
    std::printf("%llu schedules, %llu steps, %llu grants\n", static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(steps), static_cast<unsigned long long>(grants));
}

} // namespace
