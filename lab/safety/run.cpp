#include "safety/run.hpp"

#include "bench.hpp"

#include "safety/plan.hpp"
#include "safety/resource.hpp"
#include "safety/tally.hpp"
#include "terminal_text.hpp"

#include <zklock/secrets.hpp>
#include <zklock/testing/faulty_link.hpp>
#include <zklock/testing/packet_filter.hpp>
#include <zklock/testing/process.hpp>

#include <iterator>
#include <memory>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

namespace zklock::cli::safety {
namespace {

using std::chrono::milliseconds;

std::string unique_lock_name(const std::string& row, const std::string& fault) {
    static int n = 0;
    return "safety-" + row + "-" + fault + "-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

/// The last lines a client wrote (its errors), secrets redacted.
std::string log_tail(const std::filesystem::path& path, std::size_t lines = 3) {
    std::istringstream in(read_text_file(path));
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);) all.push_back(line);
    std::string out;
    for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
        out += (out.empty() ? "" : " | ") + all[i];
    return redact_secrets(out);
}

nlohmann::json failed(const std::string& row, const std::string& fault, const std::string& why,
                      std::vector<std::string> notes, std::vector<testing::ChildProcess>& clients,
                      const std::filesystem::path& dir) {
    // What the clients that gave up said.
    for (std::size_t i = 0; i < clients.size(); ++i)
        if (const auto status = clients[i].wait_exit(milliseconds(0)))
            notes.push_back("client " + std::to_string(i) + " " + testing::describe_wait_status(*status) + ": " +
                            log_tail(dir / ("client-" + std::to_string(i) + ".log")));
    auto r = skipped_row(row, fault, "failed", why);
    r["notes"] = notes;
    return r;
}

/// Does the fault to the held-back holder `victim`; returns when it has ended.
fault_window stage(const std::string& row, const std::string& fault, run_context& ctx, safety_resource& resource,
                   testing::ChildProcess& victim, int victim_index,
                   std::vector<std::unique_ptr<testing::FaultyLink>>& victim_links) {
    const auto& s = ctx.settings;
    fault_window w;
    w.start = clock_type::now();
    resource.fault_started();
    bool completed = true;
    if (fault == "paused-holder") {
        victim.pause();
        resource.release_held_back();  // read when it wakes up: its late write follows at once
        completed = resource.wait_until(w.start + s.fault_duration);
        w.end = clock_type::now();
        resource.fault_ended();
        victim.resume();
    } else if (fault == "killed-holder") {
        resource.client_killed(victim_index);
        victim.kill9();
        w.end = w.start;
        resource.fault_ended();
    } else if (fault == "killed-server") {
        resource.release_held_back();
        auto& server = ctx.servers.target(row, fault);
        server.kill9();
        completed = resource.wait_until(w.start + s.fault_duration);
        server.restart();
        w.end = clock_type::now();
        resource.fault_ended();
    } else if (fault == "restart-without-persistence") {
        resource.release_held_back();
        ctx.servers.target(row, fault).restart();
        w.end = clock_type::now();
        resource.fault_ended();
    } else if (fault == "partitioned-client") {
        resource.release_held_back();
        for (auto& link : victim_links) link->blackhole();
        completed = resource.wait_until(w.start + s.fault_duration);
        for (auto& link : victim_links) link->heal();
        w.end = clock_type::now();
        resource.fault_ended();
    }
    if (!completed) throw interrupted_error("interrupted");
    return w;
}

}  // namespace

nlohmann::json run_fault(const std::string& row, const std::string& fault, run_context& ctx) {
    auto s = ctx.settings;
    s.ttl = row_ttl(row, s.ttl);  // memcached: whole seconds, at least 2
    const bool partition = fault == "partitioned-client";
    if (partition)
        if (const auto why = testing::PacketFilter::unavailable())
            return skipped_row(row, fault, "skipped", "a partition needs iptables: " + *why);

    testing::TempDir dir("zklock-safety-");
    const auto ports = ctx.servers.ports(row, fault);
    const auto lock = unique_lock_name(row, fault);
    std::vector<std::vector<std::unique_ptr<testing::FaultyLink>>> links(static_cast<std::size_t>(s.clients));
    std::vector<nlohmann::json> configs;
    for (int i = 0; i < s.clients; ++i) {
        auto via = ports;
        if (partition)
            for (std::size_t j = 0; j < ports.size(); ++j) {
                links[static_cast<std::size_t>(i)].push_back(std::make_unique<testing::FaultyLink>(ports[j]));
                via[j] = links[static_cast<std::size_t>(i)].back()->port();
            }
        auto c = ctx.servers.client_config(row, via);
        c["lock"] = lock;
        c["write_interval_ms"] = s.write_interval.count();
        configs.push_back(std::move(c));
    }
    const auto socket_path = dir.path() / "control.sock";
    safety_resource resource(socket_path, configs, 2, trigger_of(row, fault), s.ttl, ctx.signal_fd, ctx.interrupted);
    std::vector<testing::ChildProcess> clients;  // destroyed (killed) before the resource
    for (int i = 0; i < s.clients; ++i) {
        testing::ChildProcessOptions o;
        o.output_path = dir.path() / ("client-" + std::to_string(i) + ".log");
        clients.emplace_back(std::vector<std::string>{ctx.executable, "bench-safety-client", "--control",
                                                      socket_path.string(), "--client", std::to_string(i)},
                             o);
    }

    const auto begin = clock_type::now();
    if (!resource.wait_grants(static_cast<std::size_t>(s.grants), begin, begin + milliseconds(20000) + 5 * s.ttl)) {
        if (ctx.interrupted) throw interrupted_error("interrupted");
        return failed(row, fault, "fewer than " + counted(s.grants, "grant") + " before the fault", resource.notes(),
                      clients, dir.path());
    }
    resource.arm();
    const auto victim = resource.wait_trigger(clock_type::now() + milliseconds(10000) + 5 * s.ttl);
    if (!victim) {
        if (ctx.interrupted) throw interrupted_error("interrupted");
        return failed(row, fault, "no holder reached the fault's trigger", resource.notes(), clients, dir.path());
    }
    const auto v = static_cast<std::size_t>(*victim);
    const auto w = stage(row, fault, ctx, resource, clients[v], *victim, links[v]);

    const bool recovered = resource.wait_grants(static_cast<std::size_t>(s.grants), w.end, w.end + recovery_limit(s));
    if (ctx.interrupted) throw interrupted_error("interrupted");
    resource.stop_run();
    // Each client ends its section and stops when it next asks; waiters of a
    // stuck lock never ask again.
    const auto grace_end = clock_type::now() + (recovered ? milliseconds(5000) + 3 * s.ttl : milliseconds(500));
    std::vector<std::string> notes = resource.notes();
    int stopped = 0;
    for (std::size_t i = 0; i < clients.size(); ++i) {
        auto& c = clients[i];
        if (fault == "killed-holder" && i == v) continue;
        const auto left = std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(grace_end - clock_type::now()));
        const auto status = c.wait_exit(left);
        if (!status) {
            c.kill9();
            ++stopped;
        } else if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
            notes.push_back("client " + std::to_string(i) + " " + testing::describe_wait_status(*status) + ": " +
                            log_tail(dir.path() / ("client-" + std::to_string(i) + ".log")));
        }
    }
    if (stopped) notes.push_back(std::to_string(stopped) + " client(s) still waiting for the lock at the end were killed");

    nlohmann::json extra = {{"fault_ms", std::chrono::duration_cast<milliseconds>(w.end - w.start).count()},
                            {"recovered", recovered},
                            {"notes", notes}};
    if (is_anti_example(row)) {
        const auto pttl = ctx.servers.pttl(row, fault, lock);
        // -1: the key exists and never expires (the SETNX+EXPIRE client died between its two commands).
        extra["stuck_key"] = pttl && *pttl == -1;
    }
    const auto sections = resource.sections();
    extra["incidents"] = incidents(sections, w);
    return make_row(row, fault, resource.summary(), resource.writes(), tally(sections, w), extra);
}

}  // namespace zklock::cli::safety
