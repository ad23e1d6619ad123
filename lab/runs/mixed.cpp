// zklock bench --scenario mixed: zklock, Apache Curator and kazoo clients
// contending on one lock path at the same time, as a mixed fleet does. Each
// kind's grants per second over one common window, and every hold stamped with
// CLOCK_MONOTONIC (which the JVM's System.nanoTime() and Python's
// time.monotonic_ns() read too), so the run also counts holds of two clients
// that overlapped, per pair of kinds.
//
// The peers are bench/curator/run.sh (scenario mixed: K Curator sessions in one
// JVM) and K processes of bench/kazoo/kazoo_bench.py. Each prints "ready" once
// connected and past one uncounted acquire, then waits for the end of the run,
// written to a FIFO of its own once every client is ready.
#include "bench.hpp"
#include "common.hpp"

#include <zklock/error.hpp>
#include <zklock/mutex.hpp>
#include <zklock/testing/process.hpp>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace zklock::cli {
namespace {

std::int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct hold {
    std::int64_t enter = 0, leave = 0;
    const std::string* kind = nullptr;
};

/// A peer process, the FIFO it reads the end of the run from, and its output file.
class peer_process {
public:
    peer_process(std::string kind, const std::filesystem::path& dir, const std::string& name,
                 std::vector<std::string> argv)
        : kind_(std::move(kind)), fifo_(dir / (name + ".go")), out_(dir / (name + ".out")), go_(open_fifo(fifo_)) {
        argv.insert(argv.end(), {"--go-fifo", fifo_.string()});
        testing::ChildProcessOptions o;
        o.output_path = out_;
        child_ = std::make_unique<testing::ChildProcess>(std::move(argv), o);
    }
    peer_process(const peer_process&) = delete;
    peer_process& operator=(const peer_process&) = delete;
    ~peer_process() {
        child_.reset();
        if (go_ >= 0) ::close(go_);
    }

    const std::string& kind() const { return kind_; }
    std::string output() const { return read_text_file(out_.string()); }
    bool ready() const { return ("\n" + output()).find("\nready\n") != std::string::npos; }
    bool running() { return child_->running(); }

    void go(std::int64_t end_ns) {
        const auto line = std::to_string(end_ns) + "\n";
        if (::write(go_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            throw std::system_error(errno, std::generic_category(), "write " + fifo_.string());
    }

    /// Its holds, once it exited cleanly within `timeout`; throws otherwise.
    std::vector<hold> holds(std::chrono::milliseconds timeout) {
        const auto status = child_->wait_exit(timeout);
        const auto text = output();
        if (!status || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
            throw std::runtime_error(kind_ + " client failed (" +
                                     (status ? testing::describe_wait_status(*status) : std::string("still running")) +
                                     "): " + tail(text));
        std::vector<hold> out;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            std::istringstream l(line);
            std::string word;
            hold h;
            if (l >> word && word == "s" && l >> h.enter >> h.leave) out.push_back(h);
        }
        return out;
    }

    static std::string tail(const std::string& text) { return text.size() > 2000 ? text.substr(text.size() - 2000) : text; }

private:
    // O_RDWR: opening a FIFO so does not wait for its reader, and the reader
    // never sees end of file before the line is written.
    static int open_fifo(const std::filesystem::path& p) {
        if (::mkfifo(p.c_str(), 0600) != 0) throw std::system_error(errno, std::generic_category(), "mkfifo");
        const int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + p.string());
        return fd;
    }

    std::string kind_;
    std::filesystem::path fifo_, out_;
    int go_ = -1;
    std::unique_ptr<testing::ChildProcess> child_;
};

struct overlap_count {
    std::size_t total = 0;
    std::map<std::string, std::size_t> by_pair;  ///< "curator/kazoo" (names sorted)
};

/// Holds that began before the latest-ending earlier hold had ended.
overlap_count count_overlaps(std::vector<hold> all) {
    std::sort(all.begin(), all.end(), [](const hold& a, const hold& b) { return a.enter < b.enter; });
    overlap_count out;
    const hold* latest = nullptr;
    for (const auto& h : all) {
        if (latest && h.enter <= latest->leave) {
            ++out.total;
            auto a = *h.kind, b = *latest->kind;
            if (b < a) std::swap(a, b);
            ++out.by_pair[a + "/" + b];
        }
        if (!latest || h.leave > latest->leave) latest = &h;
    }
    return out;
}

} // namespace

int bench_mixed(const mixed_bench_options& o) {
    const int k = std::max(1, o.clients);
    const auto hold_us = std::chrono::duration_cast<std::chrono::microseconds>(o.hold).count();
    testing::TempDir dir("zklock-bench-mixed-");
    std::vector<std::unique_ptr<peer_process>> peers;
    if (o.curator) {
        if (o.curator_script.empty() || !std::filesystem::exists(o.curator_script))
            std::cerr << "zklock bench: Curator harness not found at '" << o.curator_script
                      << "' (pass --curator-script); running without Curator\n";
        else
            peers.push_back(std::make_unique<peer_process>(
                "curator", dir.path(), "curator",
                std::vector<std::string>{o.curator_script, o.connect, "mixed", std::to_string(k), "1", o.path,
                                         "--hold-us", std::to_string(hold_us)}));
    }
    if (o.kazoo) {
        if (const auto why = kazoo_unavailable(o.kazoo_script); !why.empty())
            std::cerr << "zklock bench: " << why << "; running without kazoo\n";
        else
            for (int i = 0; i < k; ++i)
                peers.push_back(std::make_unique<peer_process>(
                    "kazoo", dir.path(), "kazoo-" + std::to_string(i),
                    std::vector<std::string>{kazoo_python, o.kazoo_script, "--connect", o.connect, "--path", o.path,
                                             "--hold-us", std::to_string(hold_us)}));
    }

    // zklock's clients: connected, past one uncounted acquire each.
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<std::unique_ptr<Mutex>> mutexes;
    for (int i = 0; i < k; ++i) {
        sessions.push_back(std::make_unique<Session>(o.session));
        connect_or_throw(*sessions.back());
        mutexes.push_back(std::make_unique<Mutex>(*sessions.back(), o.path));
        mutexes.back()->lock();
        mutexes.back()->unlock();
    }
    const auto ready_by = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (auto& p : peers) {
        while (!p->ready()) {
            if (!p->running() || std::chrono::steady_clock::now() > ready_by) {
                std::cerr << "zklock bench: the " << p->kind() << " client did not get ready:\n"
                          << peer_process::tail(p->output()) << "\n";
                return 1;
            }
            ::usleep(20'000);  // polling a file the peer writes; no timing depends on it
        }
    }

    const auto duration_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(o.duration).count();
    const auto end = monotonic_ns() + duration_ns;
    for (auto& p : peers) p->go(end);
    const std::string zklock_kind = "zklock";
    std::vector<std::vector<hold>> zk_holds(static_cast<std::size_t>(k));
    run_together(
        k,
        [&](int i) {
            auto& m = *mutexes[static_cast<std::size_t>(i)];
            auto& mine = zk_holds[static_cast<std::size_t>(i)];
            while (monotonic_ns() < end) {
                m.lock();
                const auto enter = monotonic_ns();
                if (hold_us > 0) std::this_thread::sleep_for(o.hold);  // the critical section's work
                const auto leave = monotonic_ns();
                m.unlock();
                mine.push_back({enter, leave, &zklock_kind});
            }
        },
        [&] {
            for (auto& s : sessions) s->close();
        });

    std::vector<hold> all;
    std::map<std::string, std::size_t> grants{{zklock_kind, 0}};
    for (const auto& h : zk_holds) {
        all.insert(all.end(), h.begin(), h.end());
        grants[zklock_kind] += h.size();
    }
    for (auto& p : peers) {
        auto h = p->holds(o.duration + std::chrono::seconds(120));
        for (auto& x : h) x.kind = &p->kind();
        grants[p->kind()] += h.size();
        all.insert(all.end(), h.begin(), h.end());
    }
    const auto overlaps = count_overlaps(all);
    const double seconds = static_cast<double>(duration_ns) / 1e9;

    auto j = zookeeper_line("mixed");
    j["clients_per_kind"] = k;
    j["duration_s"] = seconds;
    j["hold_us"] = hold_us;
    double total = 0;
    for (const auto& [kind, n] : grants) {
        const double per_s = static_cast<double>(n) / seconds;
        j["kinds"][kind] = {{"grants", n}, {"grants_per_s", per_s}};
        total += per_s;
    }
    j["grants_per_s"] = total;
    j["overlaps"] = overlaps.total;
    j["overlaps_by_pair"] = overlaps.by_pair;
    if (o.json) {
        std::cout << j.dump() << std::endl;
        return 0;
    }
    std::cout << std::fixed << std::setprecision(1);
    for (const auto& [kind, n] : grants)
        std::cout << "mixed  " << std::left << std::setw(8) << kind << std::right << "  clients " << k << "  grants "
                  << n << "  grants/s " << static_cast<double>(n) / seconds << "\n";
    std::cout << "mixed  all       grants/s " << total << " over " << seconds << " s, holds of " << hold_us
              << " us  overlapping holds "
              << overlaps.total;
    for (const auto& [pair, n] : overlaps.by_pair) std::cout << "  " << pair << " " << n;
    std::cout << std::endl;
    return 0;
}

} // namespace zklock::cli
