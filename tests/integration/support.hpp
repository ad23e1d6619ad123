// Shared helpers of the integration tests: a real server per test, sessions
// on it, and deadline waits.
#pragma once

#include <zklock/mutex.hpp>
#include <zklock/session.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace zklock::test {

using namespace std::chrono_literals;

/// The whole file; "" when it cannot be read (a process that exits while its
/// /proc files are read). Close-on-exec: the fixtures start children meanwhile.
inline std::string read_file(const std::filesystem::path& p) {
    std::string out;
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return out;
}

/// `a` followed by `b` (command lines).
inline std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// Polls `pred` until it holds or `timeout` passes; returns the last value.
inline bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() >= deadline) return pred();
        std::this_thread::sleep_for(5ms);  // allowed: polling interval of a deadline wait
    }
    return true;
}

/// Waits until the queue at `path`, as `observer` lists it, holds `n`
/// contenders (fails the test when it does not within `timeout`); returns the
/// last listing, holder first.
inline std::vector<contender> wait_for_contenders(Session& observer, const std::string& path, std::size_t n,
                                                  std::chrono::milliseconds timeout) {
    std::vector<contender> queue;
    EXPECT_TRUE(wait_until(
        [&] {
            std::error_code ec;
            queue = list_contenders(observer, path, ec);
            return !ec && queue.size() == n;
        },
        timeout))
        << queue.size() << " contenders, not " << n;
    return queue;
}

/// A session id as ZooKeeper and the C client print it: "0x" and lowercase
/// hex digits, no leading zeros.
inline std::string hex(std::int64_t id) {
    std::ostringstream out;
    out << "0x" << std::hex << static_cast<std::uint64_t>(id);
    return out.str();
}

/// True when a wchp answer ("path\n\t0x..\n\t0x..\n") lists session
/// `session_id` as a watcher of `node`.
inline bool watches(const std::string& wchp, const std::string& node, std::int64_t session_id) {
    const auto id = hex(session_id);
    std::istringstream in(wchp);
    bool inside = false;
    for (std::string l; std::getline(in, l);) {
        if (!l.empty() && l[0] == '/') inside = l == node;
        else if (inside && l.find("0x") != std::string::npos && l.substr(l.find("0x")) == id) return true;
    }
    return false;
}

/// Waits for a future with a deadline; fails the test when it does not become ready.
template <class T> T get_within(std::future<T>& f, std::chrono::milliseconds timeout = 10s) {
    if (f.wait_for(timeout) != std::future_status::ready) {
        ADD_FAILURE() << "no result within " << timeout.count() << " ms";
        throw std::runtime_error("timed out waiting for a future");
    }
    return f.get();
}

/// Completes once with the first loss reported to `lock` (a Mutex, a MultiMutex, ...).
template <class L> std::future<std::error_code> first_loss(L& lock) {
    auto p = std::make_shared<std::promise<std::error_code>>();
    auto once = std::make_shared<std::atomic<bool>>(false);
    lock.on_lost([p, once](std::error_code ec) {
        if (!once->exchange(true)) p->set_value(ec);
    });
    return p->get_future();
}

/// Starts `lock.async_lock`; the future gets the steady-clock time its grant
/// came (the test fails on an error).
template <class L> std::future<std::chrono::steady_clock::time_point> granted_at(L& lock) {
    auto p = std::make_shared<std::promise<std::chrono::steady_clock::time_point>>();
    auto f = p->get_future();
    lock.async_lock([p](std::error_code ec) {
        EXPECT_FALSE(ec) << ec.message();
        p->set_value(std::chrono::steady_clock::now());
    });
    return f;
}

/// Collects session events so tests can wait for one with a deadline.
class EventLog {
public:
    explicit EventLog(Session& s)
        : sub_(s.subscribe([this](session_event e, std::int64_t) {
              // Notified under the lock: a waiter that saw the event may end
              // the test and destroy the log as soon as it has the lock.
              std::lock_guard lk(m_);
              events_.push_back(e);
              cv_.notify_all();
          })) {}
    bool wait_for(session_event e, std::chrono::milliseconds timeout = 15s) {
        std::unique_lock lk(m_);
        return cv_.wait_for(lk, timeout, [&] { return std::find(events_.begin(), events_.end(), e) != events_.end(); });
    }
    std::vector<session_event> events() {
        std::lock_guard lk(m_);
        return events_;
    }
    std::size_t count(session_event e) {
        std::lock_guard lk(m_);
        return static_cast<std::size_t>(std::count(events_.begin(), events_.end(), e));
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::vector<session_event> events_;
    Subscription sub_;
};

/// Makes the ancestors of `path` that are missing (persistent, open ACL): a
/// test that creates a node itself, on a server an earlier test of its suite
/// may have used, where the tests' root may already be.
inline void create_parents(Session& session, const std::string& path) {
    for (auto slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
        try {
            testing::create_node(session, path.substr(0, slash));
        } catch (const std::system_error& e) {
            if (e.code() != errc::node_exists) throw;
        }
    }
}

/// A test with its own ZooKeeper server (tickTime 100 ms: sessions of 0.2-4 s).
class ServerTest : public ::testing::Test {
protected:
    static testing::ZooKeeperServerOptions server_options() {
        testing::ZooKeeperServerOptions o;
        o.tick_time_ms = 100;
        o.max_session_timeout_ms = 4000;
        // wchp shows which sessions watch which node (wait_for_watcher); a
        // later line of zoo.cfg overrides the fixture's whitelist.
        o.extra_config = {"4lw.commands.whitelist=ruok,srvr,mntr,stat,cons,wchp"};
        return o;
    }

    /// True (the default): when several tests of a suite run in one process,
    /// a test hands its server to the next one (each test works on its own
    /// paths, lock_path()), unless it left the server stopped or frozen; a test
    /// that stops, restarts or pauses the server takes one of its own
    /// (own_server()). ctest runs the suites named in zklock_add_gtests()
    /// (tests/CMakeLists.txt) as one process each; the others run a process,
    /// and so a server, per test. A suite whose tests change what the next one
    /// would see gives each test its own path_root() (ACLs on the parents), or
    /// returns false.
    virtual bool share_server() const { return true; }

    void SetUp() override {
        if (share_server() && shared_server()) server_ = std::move(shared_server());
        if (!server_) server_ = std::make_unique<testing::ZooKeeperServer>(server_options());
    }

    static void TearDownTestSuite() { shared_server().reset(); }

    void TearDown() override {
        check_no_nodes_left();
        if (share_server() && !own_server_ && server_ && server_->running() && !server_->paused())
            shared_server() = std::move(server_);
    }

    /// For a test that stops, restarts or pauses the server, called first: a
    /// server of its own, started now, as when each test had one (its restart
    /// then replays only its own log); the shared one waits for the next test.
    /// A test whose restart must fit in a session timeout passes a longer
    /// `max_session_timeout` (and connects with it): a server takes 2-5 s to
    /// start on a loaded machine, more than the default 4 s.
    void own_server(std::chrono::milliseconds max_session_timeout = 4000ms) {
        if (share_server() && server_ && !shared_server()) shared_server() = std::move(server_);
        auto o = server_options();
        o.max_session_timeout_ms = static_cast<int>(max_session_timeout.count());
        server_ = std::make_unique<testing::ZooKeeperServer>(o);
        own_server_ = true;
    }

    /// Waits until `watcher`'s session watches `node` (a full path), as the
    /// server's wchp lists it; fails the test when it does not within `timeout`.
    void wait_for_watcher(const Session& watcher, const std::string& node, std::chrono::milliseconds timeout = 20s) {
        EXPECT_TRUE(wait_until(
            [&] { return watches(server_->four_letter_word("wchp", 5s), node, watcher.session_id()); }, timeout))
            << "session " << watcher.session_id() << " does not watch " << node;
    }

    void check_no_nodes_left() {
        // Every test leaves no lock node behind on the paths it used.
        if (server_ && server_->running() && !checked_paths_.empty()) {
            auto o = options(2000ms);
            o.auth = observer_auth_;
            auto observer = std::make_unique<Session>(o);
            observer->connect();
            for (const auto& p : checked_paths_) {
                std::vector<contender> left;
                const bool empty = wait_until([&] {
                    std::error_code ec;
                    left = list_contenders(*observer, p, ec);
                    return !ec && left.empty();
                });
                EXPECT_TRUE(empty) << left.size() << " lock node(s) left under " << p;
            }
        }
    }

    SessionOptions options(std::chrono::milliseconds session_timeout = 2000ms) const {
        SessionOptions o;
        o.connect = server_->connect_string();
        o.session_timeout = session_timeout;
        o.connect_timeout = 10s;
        return o;
    }

    std::unique_ptr<Session> connect(std::chrono::milliseconds session_timeout = 2000ms) {
        auto s = std::make_unique<Session>(options(session_timeout));
        s->connect();
        return s;
    }

    /// The node this test's lock paths live under: "/zklock-tests" for every
    /// test of a suite. A suite whose tests make parents with restrictive ACLs
    /// (which would shut the next test out of "/zklock-tests") gives each test
    /// a root of its own, so that its tests can share a server.
    virtual std::string path_root() const { return "/zklock-tests"; }

    /// A lock path unique to this test; checked for leftovers in TearDown.
    std::string lock_path(const std::string& name = "lock") {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string p = path_root() + "/" + info->name() + "/" + name;
        checked_paths_.push_back(p);
        return p;
    }

    static std::unique_ptr<testing::ZooKeeperServer>& shared_server() {
        static std::unique_ptr<testing::ZooKeeperServer> server;
        return server;
    }

    std::unique_ptr<testing::ZooKeeperServer> server_;
    bool own_server_ = false;
    std::vector<std::string> checked_paths_;
    /// Who checks the paths for leftovers in TearDown (tests whose locks others may not read).
    std::vector<auth_entry> observer_auth_;
};

} // namespace zklock::test
