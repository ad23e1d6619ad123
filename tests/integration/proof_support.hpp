// Helpers of the tests that prove something did not happen by events rather
// than by waiting: what the server says a session watches (a waiter whose
// watches all stand on nodes still there cannot have been told anything that
// would grant it), and the grants and releases of a test in the order the
// holders record them.
#pragma once

#include <zklock/lock_events.hpp>
#include <zklock/session.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace zklock::test {

/// The paths a wchp answer ("path\n\t0x..\n\t0x..\n") lists session
/// `session_id` under: the nodes it holds a data or exists watch on (the
/// server's wchp does not show child watches).
inline std::set<std::string> watched_by(const std::string& wchp, std::int64_t session_id) {
    std::ostringstream id;
    id << "0x" << std::hex << static_cast<std::uint64_t>(session_id);
    std::set<std::string> out;
    std::istringstream in(wchp);
    std::string path;
    for (std::string l; std::getline(in, l);) {
        if (!l.empty() && l[0] == '/') path = l;
        else if (!path.empty() && l.find("0x") != std::string::npos && l.substr(l.find("0x")) == id.str())
            out.insert(path);
    }
    return out;
}

/// Waits (deadline `timeout`) until `server` lists `session` as watching
/// exactly `nodes` (wchp, which the server must whitelist); returns whether it
/// did, and the last set seen in `seen`.
inline bool watches_exactly(testing::ZooKeeperServer& server, const Session& session,
                            const std::set<std::string>& nodes, std::set<std::string>& seen,
                            std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        seen = watched_by(server.four_letter_word("wchp", std::chrono::seconds(5)), session.session_id());
        if (seen == nodes) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // allowed: polling interval of a deadline wait
    }
}

/// Prints a set of paths for a failure message.
inline std::string listed(const std::set<std::string>& paths) {
    std::string out;
    for (const auto& p : paths) out += (out.empty() ? "" : ", ") + p;
    return "{" + out + "}";
}

/// The grants and releases of a test's contenders in the order they happened,
/// as the holders record them. A release is noted before the call that makes
/// it and a grant in its completion, so a grant noted before the release that
/// should have caused it came while the lock was held, and a grant that finds
/// `permits` holders noted (nobody noted released) is one too many. Entries:
/// "+who" for a grant, "-who" for a release.
class GrantLog {
public:
    explicit GrantLog(std::size_t permits = 1) : s_(std::make_shared<state>(permits)) {}

    /// `who` holds from the start (granted before the log was made).
    void holds(const std::string& who) {
        std::lock_guard lk(s_->m);
        s_->holders.insert(who);
    }

    /// Before the call that releases `who`.
    void releasing(const std::string& who) {
        std::lock_guard lk(s_->m);
        s_->holders.erase(who);
        s_->entries.push_back("-" + who);
    }

    /// Starts `lock.async_lock` (a Lock, a QueueLock, a Mutex, ...); the grant
    /// is noted as `who`'s in its completion, and the future gets its code.
    /// The completion shares the log's state: it may run after the test gave up.
    template <class L> std::future<std::error_code> lock(L& lock, const std::string& who) {
        auto p = std::make_shared<std::promise<std::error_code>>();
        auto f = p->get_future();
        lock.async_lock([s = s_, p, who](std::error_code ec) {
            if (!ec) s->granted(who);
            p->set_value(ec);
        });
        return f;
    }

    /// Notes `who` granted (in a completion of another form than lock()'s).
    void granted(const std::string& who) { s_->granted(who); }

    std::vector<std::string> entries() const {
        std::lock_guard lk(s_->m);
        return s_->entries;
    }
    /// The grants that came while `permits` others held.
    std::vector<std::string> crowded() const {
        std::lock_guard lk(s_->m);
        return s_->crowded;
    }

private:
    struct state {
        explicit state(std::size_t p) : permits(p) {}
        void granted(const std::string& who) {
            std::lock_guard lk(m);
            if (holders.size() >= permits) {
                std::string others;
                for (const auto& h : holders) others += " " + h;
                crowded.push_back(who + " granted while" + others + " held");
            }
            holders.insert(who);
            entries.push_back("+" + who);
        }
        const std::size_t permits;
        std::mutex m;
        std::set<std::string> holders;
        std::vector<std::string> entries;
        std::vector<std::string> crowded;
    };
    std::shared_ptr<state> s_;
};

/// The lock events of one lock as its handler records them (shared with the
/// handler, which may run after the test's locals are gone). A timed try that
/// returned false proves nothing by itself (its deadline may have passed
/// before it looked); its record of "queued" then "left" says it looked,
/// found the place `position` and left without a grant.
class EventRecord {
public:
    template <class L> static std::shared_ptr<EventRecord> on(L& lock) {
        auto r = std::make_shared<EventRecord>();
        lock.on_event([r](const lock_event& e) {
            std::lock_guard lk(r->m_);
            r->seen_.push_back(e);
        });
        return r;
    }

    /// Waits (deadline `timeout`) until the last events are of `kinds`;
    /// returns them, or none when they do not come.
    std::optional<std::vector<lock_event>> wait_for_last(
        const std::vector<lock_event_kind>& kinds, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            {
                std::lock_guard lk(m_);
                const auto n = static_cast<std::ptrdiff_t>(kinds.size());
                if (seen_.size() >= kinds.size() &&
                    std::equal(kinds.begin(), kinds.end(), seen_.end() - n,
                               [](lock_event_kind k, const lock_event& e) { return e.kind == k; }))
                    return std::vector<lock_event>(seen_.end() - n, seen_.end());
            }
            if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));  // allowed: polling interval of a deadline wait
        }
    }

    /// The kinds recorded so far, for a failure message.
    std::string kinds() const {
        std::lock_guard lk(m_);
        std::string out;
        for (const auto& e : seen_) out += (out.empty() ? "" : " ") + std::string(to_string(e.kind));
        return out;
    }

private:
    mutable std::mutex m_;
    std::vector<lock_event> seen_;
};

} // namespace zklock::test
