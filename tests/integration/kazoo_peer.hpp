// A kazoo client as a child process for the interop tests: /usr/bin/python3
// running tests/interop/kazoo_peer.py, whose report lines (one per event, with
// CLOCK_MONOTONIC stamps) the test reads from a file.
#pragma once

#include "support.hpp"

#include <zklock/testing/process.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace zklock::test {

inline constexpr const char* python = "/usr/bin/python3";
inline const std::filesystem::path harness = std::filesystem::path(ZKLOCK_INTEROP_DIR) / "kazoo_peer.py";

/// One critical section: [acquire returned, release asked for], monotonic ns.
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

/// One kazoo client as a child process; its report lines go to a file.
class KazooPeer {
public:
    KazooPeer(const std::filesystem::path& dir, const std::string& connect, const std::string& path, std::string name,
              std::vector<std::string> args)
        : name_(std::move(name)), out_(dir / (name_ + ".out")),
          child_(argv(connect, path, name_, std::move(args)), child_options(out_)) {}

    const std::string& name() const noexcept { return name_; }

    /// The values of the lines "<event> <name> VALUE" it printed so far, in order.
    std::vector<std::string> values(const std::string& event) const {
        std::vector<std::string> out;
        std::istringstream in(output());
        std::string word, who, value;
        for (std::string line; std::getline(in, line);) {
            std::istringstream l(line);
            if (l >> word >> who >> value && word == event && who == name_) out.push_back(value);
        }
        return out;
    }

    /// The value of the `n`th (1-based) "<event> <name> VALUE" line, once printed (deadline 60 s).
    std::optional<std::string> wait_for_value(const std::string& event, std::size_t n = 1) {
        std::vector<std::string> seen;
        wait_until([&] { return (seen = values(event)).size() >= n || !child_.running(); }, 60s);
        if (seen.size() < n) seen = values(event);  // printed just before it exited
        if (seen.size() >= n) return seen[n - 1];
        ADD_FAILURE() << name_ << " never printed '" << event << "' " << n << " time(s); its output:\n" << output();
        return std::nullopt;
    }

    /// A monotonic time it printed ("ready", "acquired", "releasing").
    std::optional<std::int64_t> wait_for(const std::string& event) {
        const auto v = wait_for_value(event);
        if (!v) return std::nullopt;
        return std::stoll(*v);
    }

    /// Every "acquired"/"releasing" pair it printed.
    std::vector<section> sections() const {
        std::vector<section> out;
        std::istringstream in(output());
        std::string word, who;
        std::int64_t t = 0;
        for (std::string line; std::getline(in, line);) {
            std::istringstream l(line);
            if (!(l >> word >> who >> t) || who != name_) continue;
            if (word == "acquired") out.push_back({"kazoo " + name_, t, 0});
            if (word == "releasing" && !out.empty()) out.back().leave = t;
        }
        return out;
    }

    /// SIGUSR1: in hold mode the peer releases the lock; in churn mode with --wait-for-go it starts.
    void release() { EXPECT_TRUE(child_.signal(SIGUSR1)) << name_ << " is gone:\n" << output(); }
    void go() { release(); }

    /// Waits for a clean exit; false (with its output) otherwise.
    bool exited_cleanly() {
        const auto status = child_.wait_exit(120s);
        if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return true;
        ADD_FAILURE() << name_ << ": "
                      << (status ? testing::describe_wait_status(*status) : std::string("still running")) << "\n"
                      << output();
        return false;
    }

    std::string output() const { return read_file(out_); }

private:
    static std::vector<std::string> argv(const std::string& connect, const std::string& path, const std::string& name,
                                         std::vector<std::string> args) {
        std::vector<std::string> out{python, harness.string(), "--connect", connect, "--path", path, "--name", name};
        out.insert(out.end(), args.begin(), args.end());
        return out;
    }
    static testing::ChildProcessOptions child_options(const std::filesystem::path& out) {
        testing::ChildProcessOptions o;
        o.output_path = out;
        return o;
    }

    std::string name_;
    std::filesystem::path out_;
    testing::ChildProcess child_;
};

// kazoo 2.8 sees only its own "__lock__" names unless told another dialect's
// marker (extra_lock_patterns, kazoo >= 2.7.1): these make it queue behind zklock.
// (Markers start with '-': passed as --extra-lock-pattern=MARKER.)
inline const std::vector<std::string> kazoo_sees_zklock_mutex{"--extra-lock-pattern=-lock-"};
inline const std::vector<std::string> kazoo_reader_sees_zklock{"--extra-lock-pattern=-write-",
                                                               "--extra-lock-pattern=-lock-"};
inline const std::vector<std::string> kazoo_writer_sees_zklock{
    "--extra-lock-pattern=-write-", "--extra-lock-pattern=-read-", "--extra-lock-pattern=-lock-"};

inline std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

} // namespace zklock::test
