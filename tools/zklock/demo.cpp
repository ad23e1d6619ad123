// zklock demo: a throwaway server and the recipe at work in a few seconds.
#include "commands.hpp"

#include <zklock/mutex.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <csignal>
#include <iomanip>
#include <filesystem>
#include <future>
#include <iostream>
#include <mutex>
#include <thread>

namespace zklock::cli {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

std::mutex out_mutex;
clock_type::time_point demo_start;

template <class... Args> void say(const Args&... args) {
    std::lock_guard lk(out_mutex);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - demo_start).count();
    std::cout << "[" << std::setw(5) << ms << " ms] ";
    (std::cout << ... << args);
    std::cout << std::endl;
}

SessionOptions options(const std::string& connect, std::chrono::milliseconds timeout) {
    SessionOptions o;
    o.connect = connect;
    o.session_timeout = timeout;
    return o;
}

void fifo_part(const std::string& connect) {
    const std::string path = "/demo/orders-42";
    say("Part 1: five workers queue for ", path, " one after another; each waits only for the one before it.");
    constexpr int workers = 5;
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<std::unique_ptr<Mutex>> locks;
    std::vector<std::future<std::error_code>> granted;
    Session opener(options(connect, 4s));
    opener.connect();
    Mutex first(opener, path);
    first.lock();
    say("opener holds the lock (fencing token ", first.fencing_token(), ")");
    for (int i = 0; i < workers; ++i) {
        sessions.push_back(std::make_unique<Session>(options(connect, 4s)));
        sessions.back()->connect();
        locks.push_back(std::make_unique<Mutex>(*sessions.back(), path));
        auto& m = *locks.back();
        granted.push_back(m.async_lock(boost::asio::use_future));
        while (!m.queue_position()) std::this_thread::yield();
        say("worker-", i + 1, " queued at position ", *m.queue_position(), "  (", m.node_path().substr(path.size() + 1),
            ")");
    }
    say("opener releases");
    first.unlock();
    std::int64_t last_token = first.fencing_token();
    for (int i = 0; i < workers; ++i) {
        const auto ec = granted[static_cast<std::size_t>(i)].get();
        throw_if(ec, "demo worker");
        auto& m = *locks[static_cast<std::size_t>(i)];
        say("worker-", i + 1, " holds the lock: fencing token ", m.fencing_token(),
            m.fencing_token() > last_token ? " (higher than every earlier holder's)" : "",
            ", woken by ", m.stats().wakeups, " notification");
        last_token = m.fencing_token();
        std::this_thread::sleep_for(150ms);  // the work done under the lock
        m.unlock();
    }
}

void crash_part(const std::string& connect) {
    const std::string path = "/demo/nightly-report";
    const auto timeout = 2000ms;
    say("Part 2: a holder process is killed with SIGKILL; its session times out and the next in line takes over.");
    const auto self = std::filesystem::read_symlink("/proc/self/exe").string();
    testing::ChildProcess holder({self, "run", "-c", connect, "--session-timeout", std::to_string(timeout.count()), path,
                                  "--", "sleep", "600"});
    Session watcher(options(connect, 4s));
    watcher.connect();
    while (list_contenders(watcher, path).empty()) std::this_thread::sleep_for(20ms);
    const auto queue = list_contenders(watcher, path);
    say("`zklock run` (pid ", holder.pid(), ") holds the lock: fencing token ", queue.front().fencing_token,
        ", session timeout ", timeout.count(), " ms");
    Mutex next(watcher, path);
    auto granted = next.async_lock(boost::asio::use_future);
    while (!next.queue_position()) std::this_thread::yield();
    say("worker-6 waits at position ", *next.queue_position());
    const auto killed = clock_type::now();
    holder.signal(SIGKILL);
    say("kill -9 ", holder.pid());
    throw_if(granted.get(), "demo worker");
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - killed).count();
    say("worker-6 holds the lock ", took, " ms after the kill (the server expired the dead session): fencing token ",
        next.fencing_token(), " > ", queue.front().fencing_token);
    next.unlock();
    ::kill(-holder.pid(), SIGKILL);  // the orphaned `sleep` of the killed holder's process group
}

int demo() {
    demo_start = clock_type::now();
    say("Starting a throwaway ZooKeeper server (Debian's zookeeper package) on a free loopback port...");
    testing::ZooKeeperServerOptions so;
    so.tick_time_ms = 200;
    so.max_session_timeout_ms = 20000;
    testing::ZooKeeperServer server(so);
    say("ZooKeeper is up at ", server.connect_string());
    fifo_part(server.connect_string());
    crash_part(server.connect_string());
    say("Done. The server and its data directory are removed now.");
    return 0;
}

} // namespace

void add_demo(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("demo", "Show the lock at work against a throwaway local ZooKeeper");
    cmd->callback([&exit_code] { exit_code = demo(); });
}

} // namespace zklock::cli
