// What the ZooKeeper bench, the backend bench and the report share.
#include "bench.hpp"


#include <zklock/secrets.hpp>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <ctime>
#include <atomic>
#include <exception>
#include <iomanip>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace zklock::cli {

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string shown_command(const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& raw : argv) {
        const auto arg = redact_secrets(raw);
        const bool plain = !arg.empty() && arg.find_first_of(" '\"$\\*?;&|<>()\t\n") == std::string::npos;
        line += (line.empty() ? "" : " ") + (plain ? arg : shell_quote(arg));
    }
    return line;
}

std::optional<std::string> capture(const std::vector<std::string>& argv,
                                   const std::vector<std::pair<std::string, std::string>>& set_env,
                                   const std::vector<std::string>& unset_env) {
    const auto fail = [&](const std::string& why, const std::string& output) -> std::optional<std::string> {
        std::cerr << "zklock bench: '" << shown_command(argv) << "' " << why << (output.empty() ? "\n" : ":\n")
                  << redact_secrets(output);
        return std::nullopt;
    };
    // The environment: ours, less what is unset or set anew, plus what is set.
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry(*e);
        const auto name = entry.substr(0, entry.find('='));
        const auto replaced = [&](const std::string& n) { return n == name; };
        if (std::any_of(unset_env.begin(), unset_env.end(), replaced)) continue;
        if (std::any_of(set_env.begin(), set_env.end(), [&](const auto& kv) { return kv.first == name; })) continue;
        env.push_back(entry);
    }
    for (const auto& [name, value] : set_env) env.push_back(name + "=" + value);
    std::vector<char*> envp, args;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_copy = argv;
    for (auto& a : argv_copy) args.push_back(a.data());
    args.push_back(nullptr);

    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return fail("could not start: " + std::string(std::strerror(errno)), "");
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (rc != 0) {
        ::close(out[0]);
        return fail("could not start: " + std::string(std::strerror(rc)), "");
    }
    std::string output;
    char buf[4096];
    while (true) {
        const ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n > 0) output.append(buf, static_cast<std::size_t>(n));
        else if (n == 0 || errno != EINTR) break;
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return fail("failed", output);
    return output;
}

void say_started(const std::string& what, const std::string& where) {
    std::cerr << "zklock bench: started a throwaway " << what << " at " << where << "\n";
}

std::string kazoo_unavailable(const std::string& script) {
    if (!std::filesystem::exists(script)) return "kazoo client not found at '" + script + "' (pass --kazoo-script)";
    if (!capture({kazoo_python, "-c", "import kazoo.recipe.lock"})) return "python3-kazoo is missing";
    return {};
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(idx, v.size() - 1)];
}

std::vector<std::string> distinct_values(const nlohmann::json& rows, const char* key) {
    std::vector<std::string> values;
    for (const auto& r : rows) {
        auto v = r[key].get<std::string>();
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(std::move(v));
    }
    return values;
}

std::string format_field(const nlohmann::json& j, const char* key, int precision) {
    if (!j.contains(key) || !j[key].is_number()) return "-";
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << j[key].get<double>();
    return s.str();
}

std::chrono::steady_clock::time_point run_together(int k, const std::function<void(int)>& body,
                                                   const std::function<void()>& on_failure) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i) {
        threads.emplace_back([&, i] {
            ++ready;
            while (!go.load()) std::this_thread::yield();
            try {
                body(i);
            } catch (...) {
                std::lock_guard lk(failure_mutex);
                if (failure) return;
                failure = std::current_exception();
                on_failure();
            }
        });
    }
    while (ready.load() < k) std::this_thread::yield();
    const auto start = std::chrono::steady_clock::now();
    go = true;
    for (auto& t : threads) t.join();
    if (failure) std::rethrow_exception(failure);
    return start;
}

// Whole files through close-on-exec streams (glibc's "e" mode: O_CLOEXEC):
// std::ifstream and std::ofstream open theirs without it, and the bench
// starts servers and clients from other threads meanwhile.
std::string read_text_file(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "re");
    if (f == nullptr) return {};
    std::string text;
    char buf[8192];
    while (const std::size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
    std::fclose(f);
    return text;
}

bool write_text_file(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "we");
    if (f == nullptr) return false;
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    return std::fclose(f) == 0 && written;
}

std::string now_utc() {
    const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

nlohmann::json zookeeper_line(std::string_view scenario) {
    nlohmann::json j;
    j["backend"] = "zookeeper";
    j["scenario"] = scenario;
    return j;
}

nlohmann::json describe_machine() {
    std::string model;
    std::istringstream cpuinfo(read_text_file("/proc/cpuinfo"));
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.starts_with("model name")) {
            model = line.substr(line.find(':') + 2);
            break;
        }
    long long mem_kb = 0;
    std::istringstream meminfo(read_text_file("/proc/meminfo"));
    for (std::string line; std::getline(meminfo, line);)
        if (line.starts_with("MemTotal:")) mem_kb = std::stoll(line.substr(9));
    utsname u{};
    ::uname(&u);
    return {{"cpu", model},
            {"cpus", std::thread::hardware_concurrency()},
            {"memory_gib", std::round(static_cast<double>(mem_kb) / 1024.0 / 1024.0)},
            {"kernel", std::string(u.sysname) + " " + u.release},
            {"note", "clients and servers share this machine"}};
}

std::string program_name(std::string_view argv0) {
    return std::filesystem::path(argv0).filename() == "zklock" ? "zklock" : "zklock-bench";
}

} // namespace zklock::cli
