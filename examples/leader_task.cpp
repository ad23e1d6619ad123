// A periodic job that only one instance of a service may run: three instances
// campaign on one election path, the leader runs "the report" every 200 ms, the
// others wait in line. After a few runs the leader's session is closed abruptly
// (as if its process had died): the server deletes its election node at once and
// the next instance in line takes over, with a higher epoch.
//
//   ./example_leader_task                  # starts a throwaway ZooKeeper (needs java + the zookeeper package)
//   ./example_leader_task 127.0.0.1:2181   # or use yours
//
// In a real deployment each instance is its own process with its own Session;
// here they are threads, each with its own Session, so one program shows the handover.
#include <zklock/leader_election.hpp>
#include <zklock/session.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;

namespace {

std::mutex print_mutex;
template <class... Args> void say(const Args&... args) {
    std::lock_guard lock(print_mutex);
    (std::cout << ... << args) << std::endl;
}

// What the example checks, so that it can exit non-zero when something is off.
struct Observed {
    std::mutex mutex;
    std::condition_variable_any changed;
    int runs = 0;                      // reports run so far, by anyone
    int running = 0;                   // reports running right now (must never exceed 1)
    int current_leader = -1;           // instance that ran the last report
    std::set<int> leaders;             // every instance that led
    std::int64_t last_epoch = 0;       // epochs must only grow
    bool ok = true;
};

} // namespace

int main(int argc, char** argv) {
    try {
        // 1. A ZooKeeper to talk to: the one given, or a throwaway local one.
        std::unique_ptr<zklock::testing::ZooKeeperServer> server;
        std::string connect;
        if (argc > 1) {
            connect = argv[1];
        } else {
            server = std::make_unique<zklock::testing::ZooKeeperServer>();
            connect = server->connect_string();
            say("no connect string given: started a throwaway ZooKeeper at ", connect);
        }
        // A fresh path per run, so a previous run's leftovers never interfere.
        const std::string path = "/examples/leader-task-" + std::to_string(::getpid());

        // 2. Three instances, each with its own Session (one per process in real life).
        constexpr int instances = 3;
        std::vector<std::unique_ptr<zklock::Session>> sessions;
        for (int i = 0; i < instances; ++i) {
            zklock::SessionOptions options;
            options.connect = connect;
            sessions.push_back(std::make_unique<zklock::Session>(options));
            sessions.back()->connect();
        }

        Observed seen;
        std::vector<std::jthread> threads;
        for (int i = 0; i < instances; ++i) {
            threads.emplace_back([&, i](std::stop_token stop) {
                const std::string name = "instance-" + std::to_string(i + 1);
                zklock::LeaderElection election(*sessions[static_cast<std::size_t>(i)], path, name);
                // The job. `leading` is stopped the moment leadership is lost (or the
                // thread is asked to stop): the job must stop writing then.
                auto report = [&](std::stop_token leading, const zklock::Leadership& term) {
                    say(name, " leads (epoch ", term.epoch, ")");
                    while (!leading.stop_requested()) {
                        {
                            std::unique_lock lock(seen.mutex);
                            if (++seen.running > 1 || term.epoch < seen.last_epoch) seen.ok = false;
                            seen.last_epoch = term.epoch;
                            seen.current_leader = i;
                            seen.leaders.insert(i);
                        }
                        // Pass term.epoch along with whatever the report writes: the
                        // store can then refuse a stale leader's late writes (fencing).
                        say(name, " (epoch ", term.epoch, ") runs the report");
                        {
                            std::unique_lock lock(seen.mutex);
                            --seen.running;
                            ++seen.runs;
                        }
                        seen.changed.notify_all();
                        // Sleep until the next run, waking at once if leadership goes.
                        std::mutex m;
                        std::unique_lock lock(m);
                        std::condition_variable_any().wait_for(lock, leading, 200ms, [] { return false; });
                    }
                    say(name, " stops running the report");
                };
                try {
                    // Campaigns, runs `report` while leading, campaigns again after a
                    // term; returns once `stop` is requested.
                    election.run_as_leader(report, {}, stop);
                } catch (const zklock::error& e) {
                    // Only the instance whose session we closed gets here: a closed
                    // Session cannot campaign again (a restarted process would make a new one).
                    say(name, " is gone: ", e.code().message());
                }
            });
        }

        // 3. After three reports, "kill" the leader: close its session abruptly.
        int victim = -1;
        {
            std::unique_lock lock(seen.mutex);
            if (!seen.changed.wait_for(lock, 10s, [&] { return seen.runs >= 3; })) throw std::runtime_error("no leader ran the report");
            victim = seen.current_leader;
        }
        say("--- instance-", victim + 1, " dies (its session is closed) ---");
        const auto died = std::chrono::steady_clock::now();
        sessions[static_cast<std::size_t>(victim)]->close();

        // 4. Another instance takes over; let it run three reports, then stop everyone.
        {
            std::unique_lock lock(seen.mutex);
            if (!seen.changed.wait_for(lock, 10s, [&] { return seen.current_leader != victim; }))
                throw std::runtime_error("nobody took over");
            say("--- instance-", seen.current_leader + 1, " took over ",
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - died).count(),
                " ms after the leader died ---");
            const int target = seen.runs + 2;
            seen.changed.wait_for(lock, 10s, [&] { return seen.runs >= target; });
        }
        for (auto& t : threads) t.request_stop();
        threads.clear();  // joins

        if (!seen.ok || seen.leaders.size() < 2) {
            std::cerr << "unexpected: " << (seen.ok ? "no handover" : "two reports at once or an epoch went back")
                      << "\n";
            return 1;
        }
        say("done: ", seen.runs, " reports by ", seen.leaders.size(), " leaders, never two at once");
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "leader_task: " << e.what() << "\n";
        return 1;
    }
}
