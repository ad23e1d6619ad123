#include "runs/client_schedule.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace zklock::cli {

std::optional<thread_schedule> parse_schedstat(std::string_view line) {
    std::uint64_t values[3] = {};
    const char* p = line.data();
    const char* const end = line.data() + line.size();
    for (auto& v : values) {
        while (p != end && *p == ' ') ++p;
        const auto [next, ec] = std::from_chars(p, end, v);
        if (ec != std::errc() || next == p) return std::nullopt;
        p = next;
    }
    while (p != end && (*p == ' ' || *p == '\n')) ++p;
    if (p != end) return std::nullopt;
    return thread_schedule{values[0], values[1], values[2]};
}

process_schedule read_process_schedule() {
    process_schedule out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
        long tid = 0;
        const auto name = entry.path().filename().string();
        const auto [p, parsed] = std::from_chars(name.data(), name.data() + name.size(), tid);
        if (parsed != std::errc() || p != name.data() + name.size()) continue;
        std::ifstream in(entry.path() / "schedstat");
        std::string line;
        if (!std::getline(in, line)) continue;  // the thread ended meanwhile
        if (const auto s = parse_schedstat(line)) out.emplace(tid, *s);
    }
    return out;
}

nlohmann::json schedule_per_cycle(const process_schedule& before, const process_schedule& after, std::uint64_t cycles) {
    thread_schedule sum;
    bool any = false;
    for (const auto& [tid, a] : after) {
        const auto b = before.find(tid);
        // A number reused by a thread started since, or counters that went
        // back: not the thread read before.
        if (b == before.end() || a.cpu_ns < b->second.cpu_ns || a.wait_ns < b->second.wait_ns ||
            a.runs < b->second.runs)
            continue;
        any = true;
        sum.cpu_ns += a.cpu_ns - b->second.cpu_ns;
        sum.wait_ns += a.wait_ns - b->second.wait_ns;
        sum.runs += a.runs - b->second.runs;
    }
    if (!any || cycles == 0) return nullptr;
    const auto per = [cycles](std::uint64_t v, double unit) { return static_cast<double>(v) / unit / static_cast<double>(cycles); };
    return {{"client_cpu_us_per_cycle", per(sum.cpu_ns, 1000.0)},
            {"client_wait_us_per_cycle", per(sum.wait_ns, 1000.0)},
            {"client_runs_per_cycle", per(sum.runs, 1.0)}};
}

}  // namespace zklock::cli
