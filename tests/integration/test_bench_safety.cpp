// `zklock bench --safety` against real servers, small: ZooKeeper and the naive
// SETNX+EXPIRE recipe under three faults. The report's files exist and parse,
// hold every row asked for, and their numbers agree with what the faults do:
// ZooKeeper's fence refuses the paused holder's late write and every lost
// ZooKeeper holder is told; the SETNX+EXPIRE client killed between its two
// commands leaves a key without TTL and the lock is never granted again.
// Meanwhile every descriptor of the bench is close-on-exec, and afterwards no
// server, client process or iptables rule is left. Bad options exit 64 before
// anything starts.
#include "support.hpp"

#include <zklock/testing/packet_filter.hpp>
#include <zklock/testing/process.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace zklock::test {
namespace {

using testing::ChildProcess;
using testing::ChildProcessOptions;
using testing::TempDir;


std::string command_line(pid_t pid) {
    auto s = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    for (auto& c : s)
        if (c == '\0') c = ' ';
    return s;
}

pid_t parent_of(pid_t pid) {
    const auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 4 >= stat.size()) return -1;
    return static_cast<pid_t>(std::stol(stat.substr(close + 4)));
}

/// The children of `parent` whose command line contains `needle`.
std::set<pid_t> children_with(pid_t parent, const std::string& needle) {
    std::set<pid_t> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto pid = static_cast<pid_t>(std::stol(name));
        if (parent_of(pid) == parent && command_line(pid).find(needle) != std::string::npos) out.insert(pid);
    }
    return out;
}

/// The descriptors above 2 of `pid` that a program it starts would inherit (no
/// O_CLOEXEC in /proc/PID/fdinfo), with what they are.
std::vector<std::string> inheritable_descriptors(pid_t pid) {
    std::vector<std::string> out;
    const std::filesystem::path proc = "/proc/" + std::to_string(pid);
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(proc / "fdinfo", ec)) {
        const auto fd = entry.path().filename().string();
        if (std::stoi(fd) <= 2) continue;
        // What the descriptor is, read before and after its flags: a descriptor
        // closed (or the process gone) meanwhile is not judged, since its flags
        // may belong to another file.
        std::error_code link_ec;
        const auto target = std::filesystem::read_symlink(proc / "fd" / fd, link_ec).string();
        if (link_ec) continue;
        const auto info = read_file(entry.path());
        const auto at = info.find("flags:");
        if (at == std::string::npos) continue;
        const auto flags = std::stoul(info.substr(at + 6), nullptr, 8);
        if ((flags & 02000000) != 0) continue;
        const auto again = std::filesystem::read_symlink(proc / "fd" / fd, link_ec).string();
        if (link_ec || again != target) continue;
        // The sanitizers' leak checker reads /proc/PID/maps and lists
        // /proc/PID/task of the exiting process without O_CLOEXEC: not zklock's.
        if (target == (proc / "task").string() || target == (proc / "maps").string()) continue;
        out.push_back(fd + " -> " + target);
    }
    return out;
}

bool accepts_connections(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

struct safety_run {
    int exit_code = -1;
    std::string output;
    std::set<std::string> inheritable;  // descriptors of the bench seen without close-on-exec
    std::set<pid_t> clients;            // client processes seen while it ran
    pid_t pid = -1;                     // the bench's
};

safety_run run_bench(const TempDir& dir, std::vector<std::string> args, std::chrono::seconds limit) {
    args.insert(args.begin(), {ZKLOCK_CLI_PATH, "bench"});
    ChildProcessOptions o;
    o.output_path = dir.path() / "bench.out";
    ChildProcess bench(std::move(args), o);
    safety_run run;
    run.pid = bench.pid();
    // A descriptor counts when two polls in a row see it (the same number and
    // the same file): the sanitizers' runtime probes memory through a pipe it
    // opens without close-on-exec and closes microseconds later (strace shows
    // pipe2(fds, 0), a 16-byte write, two closes, dozens of times per run).
    std::set<std::string> seen_last;
    const auto exited = wait_until(
        [&] {
            std::set<std::string> seen;
            for (const auto& d : inheritable_descriptors(bench.pid())) {
                if (seen_last.count(d)) run.inheritable.insert(d);
                seen.insert(d);
            }
            seen_last = std::move(seen);
            for (const auto pid : children_with(bench.pid(), "bench-safety-client")) run.clients.insert(pid);
            return !bench.running();
        },
        limit);
    EXPECT_TRUE(exited) << "zklock bench --safety did not finish within " << limit.count() << " s";
    const auto status = bench.wait_exit(exited ? std::chrono::seconds(10) : std::chrono::seconds(0));
    if (status && WIFEXITED(*status)) run.exit_code = WEXITSTATUS(*status);
    run.output = read_file(dir.path() / "bench.out");
    return run;
}

const nlohmann::json* find_row(const nlohmann::json& rows, const std::string& backend, const std::string& fault) {
    for (const auto& r : rows)
        if (r["backend"] == backend && r["fault"] == fault) return &r;
    return nullptr;
}

TEST(BenchSafety, ReportHoldsEveryRowAskedForAndItsNumbersAgreeWithTheFaults) {
    TempDir dir("zklock-bench-safety-");
    const auto report = dir.path() / "report";
    std::filesystem::create_directories(report);
    std::ofstream(report / "results.json") << "the speed report\n";  // must be left alone
    const auto run = run_bench(dir,
                               {"--safety", "--backend", "zookeeper,naive-setnx-expire", "--fault",
                                "paused-holder,killed-holder,partitioned-client", "--ttl", "400", "--fault-duration",
                                "1200", "--ops", "2", "--report", report.string()},
                               std::chrono::seconds(150));
    ASSERT_EQ(run.exit_code, 0) << run.output;

    // The files, and nothing of the speed report's touched.
    for (const char* file : {"safety.json", "safety.md", "safety.svg", "safety.gp", "safety-overlaps.dat",
                             "safety-stale.dat", "safety-fence.dat"})
        EXPECT_TRUE(std::filesystem::exists(report / file)) << file << " missing:\n" << run.output;
    EXPECT_EQ(read_file(report / "results.json"), "the speed report\n");
    const auto json = nlohmann::json::parse(read_file(report / "safety.json"));
    EXPECT_NE(json["command"].get<std::string>().find("bench --safety"), std::string::npos) << json["command"];
    EXPECT_FALSE(json["machine"]["cpu"].get<std::string>().empty());

    // Every (backend, fault) asked for, once; each ran (a partition needs iptables).
    const auto& rows = json["rows"];
    ASSERT_EQ(rows.size(), 6U) << rows.dump(1);
    const bool iptables = !testing::PacketFilter::unavailable();
    for (const char* backend : {"zookeeper", "naive-setnx-expire"})
        for (const char* fault : {"paused-holder", "killed-holder", "partitioned-client"}) {
            const auto* r = find_row(rows, backend, fault);
            ASSERT_TRUE(r) << backend << " " << fault << " missing";
            const bool partition = std::string(fault) == "partitioned-client";
            EXPECT_EQ((*r)["status"], partition && !iptables ? "skipped" : "ran") << r->dump();
            if ((*r)["status"] != "ran") continue;
            // The ledger's books balance: every write was accepted or refused by the fence.
            EXPECT_EQ((*r)["accepted"].get<int>() + (*r)["refused_by_fence"].get<int>(), (*r)["writes"].get<int>())
                << r->dump();
            EXPECT_GE((*r)["grants"].get<int>(), 2) << r->dump();
            EXPECT_EQ((*r)["open_sections"], 0) << r->dump();
        }

    // ZooKeeper: the paused holder's late write is stale (a later holder had
    // written) and the fence refused it; the fence let no stale write through
    // and refused no current holder, two grants never shared a token, every
    // holder that lost the lock was told, and the lock recovered.
    const auto& zk_paused = *find_row(rows, "zookeeper", "paused-holder");
    EXPECT_GE(zk_paused["stale_accepted_unfenced"].get<int>(), 1) << zk_paused.dump();
    EXPECT_EQ(zk_paused["stale_refused_fenced"], zk_paused["stale_accepted_unfenced"]) << zk_paused.dump();
    for (const char* fault : {"paused-holder", "killed-holder", "partitioned-client"}) {
        const auto& r = *find_row(rows, "zookeeper", fault);
        if (r["status"] != "ran") continue;
        EXPECT_EQ(r["stale_accepted_fenced"], 0) << r.dump();
        EXPECT_EQ(r["current_refused_fenced"], 0) << r.dump();
        EXPECT_EQ(r["duplicate_tokens"], 0) << r.dump();
        EXPECT_EQ(r["lost_unreported"], 0) << r.dump();
        EXPECT_TRUE(r["recovered"].get<bool>()) << r.dump();
        EXPECT_TRUE(r["recovery_ms"].is_number()) << r.dump();
    }
    EXPECT_GE(zk_paused["lost_reported"].get<int>(), 1) << zk_paused.dump();
    const auto& zk_killed = *find_row(rows, "zookeeper", "killed-holder");
    EXPECT_EQ(zk_killed["overlaps"], 0) << zk_killed.dump();
    EXPECT_EQ(zk_killed["stale_accepted_unfenced"], 0) << zk_killed.dump();

    // SETNX+EXPIRE: killed between its two commands, the key never expires and
    // nobody gets the lock again; paused past its TTL, two clients held it.
    const auto& stuck = *find_row(rows, "naive-setnx-expire", "killed-holder");
    EXPECT_TRUE(stuck["stuck_key"].get<bool>()) << stuck.dump();
    EXPECT_FALSE(stuck["recovered"].get<bool>()) << stuck.dump();
    EXPECT_TRUE(stuck["recovery_ms"].is_null()) << stuck.dump();
    EXPECT_EQ(stuck["grants_after_fault"], 0) << stuck.dump();
    EXPECT_TRUE(stuck["anti_example"].get<bool>());
    const auto& naive_paused = *find_row(rows, "naive-setnx-expire", "paused-holder");
    EXPECT_GE(naive_paused["overlaps"].get<int>(), 1) << naive_paused.dump();
    EXPECT_GE(naive_paused["stale_accepted_unfenced"].get<int>(), 1) << naive_paused.dump();

    // The Markdown: a table per fault with a line per row that ran.
    const auto md = read_file(report / "safety.md");
    for (const char* fault : {"paused-holder", "killed-holder", "partitioned-client"}) {
        const auto at = md.find(std::string("\n## ") + fault + "\n");
        ASSERT_NE(at, std::string::npos) << fault << "\n" << md;
        const auto section = md.substr(at, md.find("\n## ", at + 1) - at);
        if (!iptables && std::string(fault) == "partitioned-client") continue;
        EXPECT_NE(section.find("\n| zookeeper | "), std::string::npos) << section;
        EXPECT_NE(section.find("\n| *naive-setnx-expire* (anti-example) | "), std::string::npos) << section;
    }
    EXPECT_NE(md.find("**stuck: the key has no TTL**"), std::string::npos) << md;

    // While it ran, nothing it opened would have leaked into a program it started.
    EXPECT_TRUE(run.inheritable.empty()) << "descriptors without close-on-exec: "
                                         << nlohmann::json(run.inheritable).dump();
    // Afterwards: no client process, no server, no iptables rule.
    EXPECT_FALSE(run.clients.empty()) << "no client process was ever seen";
    for (const auto pid : run.clients) {
        const auto cmd = command_line(pid);
        EXPECT_EQ(cmd.find("bench-safety-client"), std::string::npos) << "client " << pid << " still runs: " << cmd;
    }
    const std::regex started("started a throwaway [^\\n]* at 127\\.0\\.0\\.1:([0-9]+)");
    int servers = 0;
    for (std::sregex_iterator it(run.output.begin(), run.output.end(), started), end; it != end; ++it, ++servers)
        EXPECT_FALSE(accepts_connections(static_cast<std::uint16_t>(std::stoi((*it)[1].str()))))
            << "still serving: " << it->str();
    EXPECT_EQ(servers, 2) << run.output;  // ZooKeeper, Redis
    if (iptables) {
        EXPECT_TRUE(testing::zklock_packet_rules(run.pid).empty());
    }
}

TEST(BenchSafety, BadOptionsExit64BeforeAnythingStarts) {
    TempDir dir("zklock-bench-safety-");
    const auto report = (dir.path() / "report").string();
    const std::vector<std::vector<std::string>> bad = {
        {"--safety", "--clients", "1"},
        {"--safety", "--fault", "nosuch"},
        {"--safety", "--backend", "nosuch"},
        {"--fault", "paused-holder"},                      // without --safety
        {"--fault-duration", "1000"},                      // without --safety
        {"--safety", "--redis", "127.0.0.1:6379"},         // the user's servers: it kills its own
        {"--safety", "--auth-file", "/nonexistent"},
        {"--safety", "--scenario", "contended"},
        {"--safety", "--ttl", "50"},
        {"--safety", "--ttl", "500", "--write-interval", "500"},
        {"--safety", "--backend", "flock", "--fault", "killed-server,partitioned-client"},  // nothing applies
        {"--backend", "naive-setnx-expire"},               // an anti-example is no backend
        {"--ttl", "1000"},                                 // without --backend or --safety
    };
    for (auto args : bad) {
        args.insert(args.end(), {"--report", report});
        const auto shown = nlohmann::json(args).dump();
        TempDir run_dir("zklock-bench-safety-");
        const auto run = run_bench(run_dir, args, std::chrono::seconds(60));
        EXPECT_EQ(run.exit_code, 64) << shown << "\n" << run.output;
        EXPECT_EQ(run.output.find("started a throwaway"), std::string::npos) << shown << "\n" << run.output;
        EXPECT_FALSE(std::filesystem::exists(report)) << shown;
        EXPECT_TRUE(run.clients.empty()) << shown;
    }
}

}  // namespace
}  // namespace zklock::test
