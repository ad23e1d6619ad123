// A peer lock client (kazoo, go-zookeeper) as a child process for the interop
// tests: a harness that takes one recipe on a lock path and prints one line per
// event ("ready NAME T", "acquired NAME T", "releasing NAME T", "done NAME N",
// kazoo's also "predecessor NAME NODE") with CLOCK_MONOTONIC stamps to a file the
// test reads. Hold mode releases on SIGUSR1; churn mode with --wait-for-go starts on it.
#pragma once

#include "sections.hpp"
#include "support.hpp"

#include <zklock/testing/process.hpp>

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

/// One peer client as a child process whose report lines go to a file: `program`
/// (its argv up to the harness's own options) started with `--connect CONNECT
/// --path PATH --name NAME` and `args`; `kind` names it in the sections ("kazoo").
class ReportingPeer {
public:
    ReportingPeer(std::string kind, std::vector<std::string> program, const std::filesystem::path& dir,
                  const std::string& connect, const std::string& path, std::string name, std::vector<std::string> args)
        : kind_(std::move(kind)), name_(std::move(name)), out_(dir / (name_ + ".out")),
          child_(argv(std::move(program), connect, path, name_, std::move(args)), child_options(out_)) {}

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
            if (word == "acquired") out.push_back({kind_ + " " + name_, t, 0});
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
    static std::vector<std::string> argv(std::vector<std::string> out, const std::string& connect,
                                         const std::string& path, const std::string& name,
                                         std::vector<std::string> args) {
        out.insert(out.end(), {"--connect", connect, "--path", path, "--name", name});
        out.insert(out.end(), args.begin(), args.end());
        return out;
    }
    static testing::ChildProcessOptions child_options(const std::filesystem::path& out) {
        testing::ChildProcessOptions o;
        o.output_path = out;
        return o;
    }

    std::string kind_;
    std::string name_;
    std::filesystem::path out_;
    testing::ChildProcess child_;
};

/// The churn check with peer processes: `peers` were started in churn mode
/// with --wait-for-go and `rounds` iterations. Once each is connected, they and
/// one zklock Mutex client per session start together and take `rounds` turns
/// each on `path`; everyone must make full progress, the kinds must take turns
/// and no two critical sections may overlap.
template <class Peer>
void expect_churn_with_peers(const std::vector<std::unique_ptr<Peer>>& peers,
                             const std::vector<std::unique_ptr<Session>>& sessions, const std::string& path,
                             int rounds, const std::string& kind) {
    for (auto& p : peers) ASSERT_TRUE(p->wait_for("ready"));
    for (auto& p : peers) p->go();
    auto all = zklock_churn(sessions, path, rounds);
    EXPECT_EQ(all.size(), sessions.size() * static_cast<std::size_t>(rounds)) << "zklock made no full progress";
    for (auto& p : peers) {
        ASSERT_TRUE(p->exited_cleanly());
        const auto s = p->sections();
        EXPECT_EQ(s.size(), static_cast<std::size_t>(rounds)) << p->name() << " made no full progress";
        all.insert(all.end(), s.begin(), s.end());
    }
    expect_turns_without_overlap(all, kind);
}

} // namespace zklock::test
