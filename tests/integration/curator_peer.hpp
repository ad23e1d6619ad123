// An Apache Curator client as a child process for the interop tests: a JVM
// running tests/interop/CuratorPeer.java (compiled at build time), one Curator
// session that takes the recipes the test asks for, one command a line, and
// reports each event with a CLOCK_MONOTONIC stamp to a file the test reads.
// One JVM per test, reused for every step: a JVM is slow to start and large.
#pragma once

#include "sections.hpp"
#include "support.hpp"

#include <zklock/testing/process.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace zklock::test {

/// Why the Curator peer cannot run here, or nullopt when it can.
/// (Where the harness is compiled to is fixed; what the configure step found
/// is not compiled in, so configuring again once the packages came builds the
/// harness without recompiling the tests.)
inline std::optional<std::string> curator_peer_unavailable() {
    if (::access(ZKLOCK_CURATOR_CLASS, R_OK) != 0)
        return std::string(ZKLOCK_CURATOR_CLASS) +
               " was not built: a JDK or Curator's jars were missing when zklock was configured (scripts/setup "
               "installs default-jdk-headless and libcurator-recipes-java; configure again)";
    const char* path = std::getenv("PATH");
    for (std::string_view dirs = path != nullptr ? path : ""; !dirs.empty();) {
        const auto colon = dirs.find(':');
        const auto dir = dirs.substr(0, colon);
        if (!dir.empty() && ::access((std::string(dir) + "/java").c_str(), X_OK) == 0) return std::nullopt;
        dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    }
    return std::string("no java on PATH: run scripts/setup (default-jre-headless)");
}

/// One Curator session on one lock path (see CuratorPeer.java for the protocol).
/// The commands go through a FIFO the peer reads; its report goes to a file.
class CuratorPeer {
public:
    /// With `jvm_flags` (system properties, e.g. ZooKeeper's client TLS ones)
    /// before the class path, and `extra_classpath` appended to it.
    CuratorPeer(const std::filesystem::path& dir, const std::string& connect, const std::string& path,
                std::vector<std::string> jvm_flags = {}, const std::string& extra_classpath = {})
        : fifo_(dir / "curator-peer.commands"), out_(dir / "curator-peer.out"), commands_{open_fifo(fifo_)},
          child_(argv(connect, path, fifo_, std::move(jvm_flags), extra_classpath), child_options(out_)) {}

    CuratorPeer(const CuratorPeer&) = delete;
    CuratorPeer& operator=(const CuratorPeer&) = delete;

    /// Asks for InterProcessMutex / InterProcessReadWriteLock's read or write side /
    /// LeaderSelector / LeaderLatch as contender `id`; returns at once (the peer waits).
    void mutex(const std::string& id) { send("mutex " + id); }
    /// InterProcessMutex with makeRevocable() as contender `id`: its listener
    /// prints "revocation-requested ID T" and releases.
    void revocable(const std::string& id) { send("revocable " + id); }
    /// Revoker.attemptRevoke(client, node) (a full path); "revoke-sent ID T" once written.
    void revoke(const std::string& id, const std::string& node) { send("revoke " + id + " " + node); }
    void read(const std::string& id) { send("read " + id); }
    void write(const std::string& id) { send("write " + id); }
    void selector(const std::string& id) { send("selector " + id); }
    void latch(const std::string& id) { send("latch " + id); }
    /// InterProcessSemaphoreV2 with 2 leases: one lease.
    void semaphore(const std::string& id) { send("semaphore " + id); }
    /// InterProcessMutex as contender `id`, taken and released `n` times in a row
    /// (listing the path while it holds); "churned ID N" when done.
    void churn(const std::string& id, int n) { send("churn " + id + " " + std::to_string(n)); }
    /// Ends what `id` holds or waits for (a lock's release, a latch's close(), a
    /// selector's takeLeadership() returning).
    void release(const std::string& id) { send("release " + id); }

    /// The words after "<event> <id>" of every such line printed so far, in order.
    std::vector<std::vector<std::string>> lines(const std::string& event, const std::string& id) const {
        std::vector<std::vector<std::string>> out;
        std::istringstream in(output());
        for (std::string line; std::getline(in, line);) {
            std::istringstream l(line);
            std::string e, who;
            if (!(l >> e >> who) || e != event || who != id) continue;
            std::vector<std::string> rest;
            for (std::string w; l >> w;) rest.push_back(w);
            out.push_back(std::move(rest));
        }
        return out;
    }

    /// Every "acquired"/"releasing" pair `id` printed, as sections of "curator ID".
    std::vector<section> sections(const std::string& id) const {
        std::vector<section> out;
        for (const auto& words : lines("acquired", id)) out.push_back({"curator " + id, std::stoll(words.at(0)), 0});
        const auto leaves = lines("releasing", id);
        for (std::size_t i = 0; i < out.size() && i < leaves.size(); ++i) out[i].leave = std::stoll(leaves[i].at(0));
        return out;
    }

    /// True once "<event> <id> ..." was printed.
    bool printed(const std::string& event, const std::string& id) const { return !lines(event, id).empty(); }

    /// The words after "<event> <id>" of the first such line, once printed (deadline
    /// 60 s); nullopt (and a failure with the peer's output) when it never comes or
    /// the peer reports an error for `id` first.
    std::optional<std::vector<std::string>> wait_for_line(const std::string& event, const std::string& id) {
        wait_until([&] { return printed(event, id) || printed("error", id) || !child_.running(); }, 60s);
        const auto found = lines(event, id);
        if (!found.empty()) return found.front();
        ADD_FAILURE() << "the Curator peer never printed '" << event << " " << id << "'; its output:\n" << output();
        return std::nullopt;
    }

    /// The stamp T of the first "<event> <id> T ..." line, as wait_for_line().
    std::optional<std::int64_t> wait_for(const std::string& event, const std::string& id) {
        const auto words = wait_for_line(event, id);
        if (!words || words->empty()) return std::nullopt;
        return std::stoll(words->front());
    }

    /// The node `id` reported with its first "<event> <id> T NODE" line (its last path element).
    std::string node(const std::string& event, const std::string& id) const {
        const auto found = lines(event, id);
        if (found.empty() || found.front().size() < 2) return {};
        return std::filesystem::path(found.front()[1]).filename().string();
    }

    /// Sends "quit" (the peer closes its session and exits) and waits for a clean
    /// exit; false (with its output) on another exit or when it reported an error.
    bool quit() {
        send("quit");
        const auto status = child_.wait_exit(60s);
        const bool errors = ("\n" + output()).find("\nerror ") != std::string::npos;
        if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0 && !errors) return true;
        ADD_FAILURE() << "Curator peer: "
                      << (status ? testing::describe_wait_status(*status) : std::string("still running")) << "\n"
                      << output();
        return false;
    }

    std::string output() const { return read_file(out_); }

private:
    struct Fd {
        int fd = -1;
        ~Fd() {
            if (fd >= 0) ::close(fd);
        }
    };
    // O_RDWR: opening a FIFO so does not wait for the reader (Linux), and the
    // peer never sees end of file while the test holds it open.
    static int open_fifo(const std::filesystem::path& p) {
        if (::mkfifo(p.c_str(), 0600) != 0) throw std::system_error(errno, std::generic_category(), "mkfifo");
        const int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + p.string());
        return fd;
    }

    void send(const std::string& command) {
        const std::string line = command + "\n";
        // Far below PIPE_BUF: one write, never interleaved or cut.
        EXPECT_EQ(::write(commands_.fd, line.data(), line.size()), static_cast<ssize_t>(line.size()))
            << "cannot send '" << command << "' to the Curator peer";
    }

    static std::vector<std::string> argv(const std::string& connect, const std::string& path,
                                         const std::filesystem::path& fifo, std::vector<std::string> jvm_flags,
                                         const std::string& extra_classpath) {
        // A small JVM: two cores and little memory are shared by the whole test run.
        std::vector<std::string> out{"java", "-Xmx64m", "-XX:+UseSerialGC", "-Xshare:auto", "-XX:TieredStopAtLevel=1"};
        out.insert(out.end(), jvm_flags.begin(), jvm_flags.end());
        const std::string cp =
            std::string(ZKLOCK_CURATOR_CLASSPATH) + (extra_classpath.empty() ? "" : ":" + extra_classpath);
        out.insert(out.end(), {"-cp", cp, "CuratorPeer", "--connect", connect, "--path", path, "--commands",
                               fifo.string()});
        return out;
    }
    static testing::ChildProcessOptions child_options(const std::filesystem::path& out) {
        testing::ChildProcessOptions o;
        o.output_path = out;
        return o;
    }

    std::filesystem::path fifo_;
    std::filesystem::path out_;
    Fd commands_;  // before child_: closed after the child is gone
    testing::ChildProcess child_;
};

} // namespace zklock::test
