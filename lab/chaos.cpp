// zklock chaos: the safety soak. Starts its own servers (a 3-node ensemble by
// default) and K clients looping on one lock, applies random faults from the
// fault kit for a while, and checks what the chaos suite checks
// (lab/chaos.hpp): no two grants with one token, accepted fenced
// writes in token order, every overlap explained by a loss report, every
// client entering again after every fault, no node left, no client hung.
// Prints each fault as applied and one summary line at the end; exits 1 on a
// violation.
#include "arguments.hpp"
#include "command.hpp"
#include "common.hpp"
#include "terminal_text.hpp"

#include "chaos/chaos.hpp"
#include <zklock/testing/packet_filter.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <signal.h>

namespace zklock::cli {
namespace {

struct chaos_options {
    std::string duration_text = "5m";
    std::string seed_text;
    int clients = 6;
    int ensemble = 3;
    std::string recipe = "mutex";
    int session_timeout_ms = 1500;
    bool no_iptables = false;
};

using steady = std::chrono::steady_clock;

std::string elapsed(steady::time_point start) {
    const auto s = std::chrono::duration<double>(steady::now() - start).count();
    std::ostringstream out;
    out << std::fixed << std::setprecision(1) << std::setw(7) << s << " s";
    return out.str();
}

int chaos_command(const chaos_options& o) {
    const auto duration = parse_wait_duration(o.duration_text);
    if (!duration) {
        notice("--duration: " + duration.error);
        return exit_usage;
    }
    std::uint64_t seed = 0;
    try {
        if (!o.seed_text.empty()) {
            const auto s = lab::parse_chaos_seed(o.seed_text);
            if (!s) {
                notice("--seed: not a seed (decimal digits, 0 to 2^64-1): '" + o.seed_text + "'");
                return exit_usage;
            }
            seed = *s;
        } else {
            seed = lab::chaos_seed();
        }
    } catch (const std::invalid_argument& e) {
        notice(e.what());
        return exit_usage;
    }
    lab::ChaosOptions co;
    co.nodes = static_cast<std::size_t>(o.ensemble);
    co.clients = static_cast<std::size_t>(o.clients);
    co.session_timeout = std::chrono::milliseconds(o.session_timeout_ms);
    co.links = true;
    co.client.path = "/zklock-chaos/soak";
    if (o.recipe == "election") co.client.recipe = lab::chaos_recipe::leader_election;
    else if (o.recipe == "semaphore") co.client.recipe = lab::chaos_recipe::semaphore;

    lab::chaos_schedule_options so;
    so.clients = co.clients;
    so.nodes = co.nodes;
    so.min_duration = std::chrono::milliseconds(300);
    so.max_duration = std::chrono::milliseconds(4 * o.session_timeout_ms);  // some faults outlast the session timeout
    so.min_quiet = std::chrono::milliseconds(200);
    so.max_quiet = std::chrono::milliseconds(2000);
    const auto no_iptables = testing::PacketFilter::unavailable();
    if (o.no_iptables || no_iptables) so.without_iptables();

    // Blocked before the fixtures start threads or processes (their children
    // start with an empty mask): a Ctrl-C ends the run early, with its summary.
    sigset_t stop_signals;
    ::sigemptyset(&stop_signals);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&stop_signals, sig);
    ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    const auto stop_requested = [&] {
        const timespec now{0, 0};
        const int sig = ::sigtimedwait(&stop_signals, nullptr, &now);
        if (sig > 0) std::cout << "zklock chaos: " << ::strsignal(sig) << ": stopping early" << std::endl;
        return sig > 0;
    };

    std::cout << "zklock chaos: " << lab::describe_seed(seed) << "\n"
              << "zklock chaos: " << (co.nodes > 1 ? std::to_string(co.nodes) + "-node ensemble" : "standalone server")
              << ", " << counted(o.clients, "client") << " on one " << lab::to_string(co.client.recipe) << " ("
              << co.client.path << "), session timeout " << o.session_timeout_ms << " ms, for "
              << duration.value.count() / 1000.0 << " s"
              << (o.no_iptables || no_iptables ? ", without iptables faults" + (no_iptables ? " (" + *no_iptables + ")" : std::string())
                                               : std::string())
              << std::endl;

    const auto start = steady::now();
    std::vector<std::string> stalled_after;  // clients that did not get the lock again after a fault
    bool described_stall = false;
    std::string broken;                      // why the run could not go on
    lab::chaos_outcome outcome;
    try {
        lab::ChaosCluster cluster(co, seed);
        std::cout << "zklock chaos: servers at " << cluster.ensemble().connect_string() << " (" << elapsed(start) << ")"
                  << std::endl;
        cluster.start();
        while (steady::now() - start < duration.value && !stop_requested()) {
            const auto step = lab::next_chaos_step(cluster.rng(), so);
            std::cout << "[" << elapsed(start) << "] fault " << cluster.faults() + 1 << ": " << lab::describe(step)
                      << std::endl;
            try {
                const auto what = cluster.apply(step);
                std::cout << "[" << elapsed(start) << "]   " << what << std::endl;
            } catch (const std::exception& e) {
                broken = e.what();
                break;
            }
            // Liveness after every fault, not only the last: each client gets the lock again.
            const auto stalled = cluster.wait_for_progress(std::chrono::seconds(60));
            for (const auto& name : stalled) {
                stalled_after.push_back(name + " after fault " + std::to_string(cluster.faults()));
                std::cout << "[" << elapsed(start) << "]   " << name << " did not get the lock again within 60 s"
                          << std::endl;
            }
            // The first stall: what every client was doing, to find out why.
            if (!stalled.empty() && !described_stall) {
                described_stall = true;
                for (const auto& line : cluster.describe_clients())
                    std::cout << "[" << elapsed(start) << "]   state: " << line << std::endl;
            }
        }
        auto last = cluster.wait_for_progress(std::chrono::seconds(60));
        stalled_after.insert(stalled_after.end(), last.begin(), last.end());
        if (!stalled_after.empty() || !broken.empty())
            for (const auto& line : cluster.describe_clients())
                std::cout << "[" << elapsed(start) << "]   state at the end: " << line << std::endl;
        outcome = cluster.finish(stalled_after);
    } catch (const std::exception& e) {
        notice(std::string("chaos: ") + e.what());
        return exit_unavailable;
    }
    auto violations = lab::chaos_violations(outcome);
    if (!broken.empty()) violations.push_back("the servers did not come back: " + broken);
    std::cout << "zklock chaos: " << lab::chaos_line(outcome) << " seed=" << seed << " duration_s="
              << static_cast<long long>(std::chrono::duration<double>(steady::now() - start).count()) << std::endl;
    for (const auto& v : violations) std::cout << "zklock chaos: VIOLATION: " << v << std::endl;
    if (violations.empty()) std::cout << "zklock chaos: no violation" << std::endl;
    return violations.empty() ? 0 : 1;
}

}  // namespace

void add_chaos(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<chaos_options>();
    auto* cmd = app.add_subcommand("chaos", chaos_description);
    cmd->add_option("--duration", o->duration_text,
                    std::string("How long to inject faults (default 5m)") + duration_forms)
        ->type_name("TIME")
        ->check(duration_check(true));
    cmd->add_option("--seed", o->seed_text,
                    "Seed of the fault schedule (default: $ZKLOCK_CHAOS_SEED, else fresh; printed first)");
    cmd->add_option("--clients", o->clients, "Clients looping on the lock (default 6)")->check(CLI::Range(1, 64));
    cmd->add_option("--ensemble", o->ensemble, "Servers: 3 (default) or 5 for an ensemble, 1 for a standalone server")
        ->check(CLI::IsMember({1, 3, 5}));
    cmd->add_option("--recipe", o->recipe, "mutex (default), election or semaphore (2 permits)")
        ->check(CLI::IsMember({"mutex", "election", "semaphore"}));
    add_duration_option(*cmd, "--session-timeout", o->session_timeout_ms, "Session timeout (default 1500ms)",
                        {std::chrono::milliseconds(200), std::chrono::milliseconds(4000)}, false);
    cmd->add_flag("--no-iptables", o->no_iptables, "Leave out the faults that need iptables (blackholes, partitions)");
    cmd->callback([o, &exit_code] { exit_code = chaos_command(*o); });
}

}  // namespace zklock::cli
