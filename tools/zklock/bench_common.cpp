// What the ZooKeeper bench, the backend bench and the report share.
#include "bench.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iomanip>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>

namespace zklock::cli {

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(idx, v.size() - 1)];
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

} // namespace zklock::cli
