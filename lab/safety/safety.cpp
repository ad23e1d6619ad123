// zklock bench --safety: every applicable (row, fault) pair, one run each
// (safety/run.hpp), printed as it ends and gathered into the report.
#include "safety/safety.hpp"

#include "bench.hpp"
#include "safety/run.hpp"
#include "safety/servers.hpp"
#include "safety/tally.hpp"

#include <zklock/secrets.hpp>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include <sys/signalfd.h>
#include <unistd.h>

namespace zklock::cli {
namespace {

/// The stop signals, blocked in this thread (and so in every thread started
/// later) and read from a signalfd: a Ctrl-C ends the bench through its
/// cleanup, so no iptables rule, server or client is left behind.
class blocked_stop_signals {
public:
    blocked_stop_signals() {
        ::sigemptyset(&set_);
        for (const int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&set_, sig);
        ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
        fd_ = ::signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC);
    }
    ~blocked_stop_signals() {
        if (fd_ >= 0) ::close(fd_);
    }
    blocked_stop_signals(const blocked_stop_signals&) = delete;
    blocked_stop_signals& operator=(const blocked_stop_signals&) = delete;
    int fd() const noexcept { return fd_; }
    /// True when a stop signal is waiting (it is consumed).
    bool arrived() const {
        signalfd_siginfo info{};
        return fd_ >= 0 && ::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info);
    }

private:
    sigset_t set_{}, old_{};
    int fd_ = -1;
};

std::string ms_text(const nlohmann::json& v) {
    return v.is_number() ? std::to_string(v.get<long long>()) + " ms" : std::string("never");
}

/// A count, or "n/a" where the row has none (the fence columns of a row without tokens).
std::string count_text(const nlohmann::json& v) { return v.is_null() ? "n/a" : v.dump(); }

void print_safety_row(const nlohmann::json& r, bool json) {
    if (json) {
        std::cout << r.dump() << std::endl;
        return;
    }
    std::cout << std::left << std::setw(20) << r["backend"].get<std::string>() << std::setw(29)
              << r["fault"].get<std::string>();
    if (r["status"] != "ran") {
        std::cout << r["status"].get<std::string>() << ": " << r["reason"].get<std::string>() << std::endl;
        return;
    }
    std::cout << "grants " << r["grants"] << "  overlaps " << r["overlaps"] << "  stale writes " << r["stale_accepted_unfenced"]
              << " (fence let through " << count_text(r["stale_accepted_fenced"]) << ")  current writes refused "
              << count_text(r["current_refused_fenced"]) << "  duplicate tokens " << count_text(r["duplicate_tokens"])
              << "  next grant "
              << ms_text(r["next_grant_after_fault_start_ms"])
              << "  recovery " << ms_text(r["recovery_ms"]) << "  lost: told " << r["lost_reported"] << ", not told "
              << r["lost_unreported"];
    if (r.value("stuck_key", false)) std::cout << "  stuck key (no TTL)";
    std::cout << std::endl;
}

nlohmann::json describe(const std::vector<std::string_view>& names, std::string_view (*text)(std::string_view)) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto n : names) out[std::string(n)] = std::string(text(n));
    return out;
}

}  // namespace

int bench_safety(const safety_bench_options& o) {
    blocked_stop_signals signals;
    std::atomic<bool> interrupted{false};
    safety::safety_servers servers(o.settings.ttl);
    safety::run_context ctx{o.settings, servers, std::filesystem::read_symlink("/proc/self/exe").string(), signals.fd(),
                            interrupted};
    nlohmann::json rows = nlohmann::json::array();
    int failures = 0;
    for (const auto& row : o.rows) {
        for (const auto& fault : o.faults) {
            if (const auto why = safety::not_applicable(row, fault)) {
                rows.push_back(safety::skipped_row(row, fault, "not applicable", *why));
                continue;
            }
            std::cerr << "zklock bench: safety run: " << row << " under " << fault << "\n";
            try {
                if (signals.arrived()) interrupted = true;
                if (interrupted) throw safety::interrupted_error("interrupted");
                rows.push_back(safety::run_fault(row, fault, ctx));
            } catch (const safety::interrupted_error&) {
                std::cerr << "zklock bench: interrupted; stopped every server and client\n";
                return 130;
            } catch (const std::exception& e) {
                rows.push_back(safety::skipped_row(row, fault, "failed", redact_secrets(e.what())));
            }
            if (rows.back()["status"] == "failed") ++failures;
            print_safety_row(rows.back(), o.json);
        }
    }
    const auto& s = o.settings;
    const nlohmann::json report = {
        {"command", o.command_line},
        {"date", now_utc()},
        {"machine", describe_machine()},
        {"settings",
         {{"clients", s.clients},
          {"ttl_ms", s.ttl.count()},
          {"fault_ms", s.fault_duration.count()},
          {"write_interval_ms", s.write_interval.count()},
          {"writes_per_section", 2},
          {"grants_before_and_after", s.grants},
          {"recovery_limit_ms", safety::recovery_limit(s).count()}}},
        {"servers", servers.described()},
        {"row_descriptions", describe(safety::row_names(), safety::row_description)},
        {"fault_descriptions", describe(safety::fault_names(), safety::fault_description)},
        {"rows", rows}};
    if (!o.report_dir.empty() && !write_safety_report(o.report_dir, report)) return 1;
    return failures ? 1 : 0;
}

}  // namespace zklock::cli
