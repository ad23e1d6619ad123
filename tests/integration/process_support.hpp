// What the fixture and CLI tests ask of /proc and of time: a process's command
// line, whether a ZooKeeper server naming a directory still runs, and a wait
// on a condition with a deadline.
#pragma once

#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace zklock::test {

/// Polls `predicate` until it holds (true) or `timeout` passes (false).
template <class Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (predicate()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // allowed: polling interval of a deadline wait
    }
}

/// The command line of the process at `proc_dir` (/proc/PID), its arguments
/// separated by spaces; "" for a process that is gone (even one that exits
/// while being read: libstdc++ then throws from the stream buffer).
inline std::string read_cmdline(const std::filesystem::path& proc_dir) {
    std::string cmdline;
    try {
        std::ifstream in(proc_dir / "cmdline", std::ios::binary);
        cmdline.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } catch (const std::exception&) {
        return {};
    }
    for (auto& c : cmdline) {
        if (c == '\0') c = ' ';
    }
    return cmdline;
}

/// Whether `cmdline` is a ZooKeeper server's whose command line holds `needle`.
inline bool is_server_cmdline(const std::string& cmdline, const std::string& needle) {
    return cmdline.find("QuorumPeerMain") != std::string::npos && cmdline.find(needle) != std::string::npos;
}

/// The /proc/PID directory of every process on this machine.
inline std::vector<std::filesystem::path> process_dirs() {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) out.push_back(entry.path());
    }
    return out;
}

/// Whether a ZooKeeper server whose command line holds `needle` (its
/// directory) runs on this machine.
inline bool quorum_peer_running_with(const std::string& needle) {
    for (const auto& dir : process_dirs())
        if (is_server_cmdline(read_cmdline(dir), needle)) return true;
    return false;
}

} // namespace zklock::test
