// `zklock-bench bench-safety-client` (hidden): one client process of
// `zklock bench --safety`. It connects to the bench's Unix socket, gets its
// configuration there (nothing but the socket's path and its index is on its
// command line), and loops: acquire, enter, write while it holds the lock,
// leave, release, each step told to the bench (safety/protocol.hpp).
//
// Before each write it checks that it still holds the lock (Lock::is_held(),
// which turns false when the backend tells it of a loss; the naive recipes:
// their own clock against the TTL they set), then asks the bench whether to
// write: a pause there stops it between its check and its write, as a GC
// pause would.
#include "safety/safety.hpp"
#include "safety/naive.hpp"
#include "safety/plan.hpp"
#include "safety/protocol.hpp"
#include "common.hpp"

#include <zklock/backends.hpp>
#include <zklock/secrets.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace zklock::cli::safety {
namespace {

using std::chrono::milliseconds;

/// The client's end of the Unix socket: one request, one answer.
class control_channel {
public:
    explicit control_channel(const std::string& path) {
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        if (path.size() >= sizeof addr.sun_path) throw std::runtime_error("control socket path too long");
        std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
            throw std::system_error(errno, std::generic_category(), "connect to the bench");
    }
    ~control_channel() { ::close(fd_); }
    control_channel(const control_channel&) = delete;
    control_channel& operator=(const control_channel&) = delete;

    std::string ask(const request& r) {
        const auto line = format(r) + "\n";
        for (std::size_t sent = 0; sent < line.size();) {
            const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) throw std::system_error(errno, std::generic_category(), "write to the bench");
            sent += static_cast<std::size_t>(n);
        }
        while (true) {
            if (const auto end = buffer_.find('\n'); end != std::string::npos) {
                auto answer = buffer_.substr(0, end);
                buffer_.erase(0, end + 1);
                return answer;
            }
            char buf[4096];
            const ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw std::runtime_error("the bench closed the connection");
            buffer_.append(buf, static_cast<std::size_t>(n));
        }
    }
    std::string ask(request_kind kind, std::int64_t number = 0, std::string text = {}) {
        request r;
        r.kind = kind;
        r.number = number;
        r.text = std::move(text);
        return ask(r);
    }

private:
    int fd_ = -1;
    std::string buffer_;
};

BackendOptions backend_options(const nlohmann::json& c) {
    BackendOptions o;
    o.zookeeper = c.value("zookeeper", o.zookeeper);
    o.zookeeper_session_timeout = milliseconds(c.value("ttl_ms", 1000));
    o.redis = c.value("redis", o.redis);
    if (c.contains("redlock")) o.redlock = c["redlock"].get<std::vector<std::string>>();
    o.postgres = c.value("postgres", o.postgres);
    o.mysql = c.value("mysql", o.mysql);
    o.flock_directory = c.value("flock_directory", o.flock_directory);
    o.memcached = c.value("memcached", o.memcached);
    o.etcd = c.value("etcd", o.etcd);
    o.ttl = milliseconds(c.value("ttl_ms", 1000));
    o.connect_timeout = std::max(milliseconds(2000), 2 * o.ttl);
    return o;
}

/// Writes while it holds the lock and the bench says go; returns the loss it
/// learnt of ("" for none).
std::string critical_section(control_channel& bench, milliseconds write_interval,
                             const std::function<std::string()>& lost) {
    for (std::int64_t n = 1;; ++n) {
        if (auto why = lost(); !why.empty()) return why;
        if (bench.ask(request_kind::ready, n) != "go") return "";
        bench.ask(request_kind::write);
        std::this_thread::sleep_for(write_interval);
    }
}

void library_client(control_channel& bench, const nlohmann::json& c) {
    const auto write_interval = milliseconds(c.value("write_interval_ms", 50));
    const auto ttl = milliseconds(c.value("ttl_ms", 1000));
    auto service = open_lock_service(c.at("backend").get<std::string>(), backend_options(c));
    Lock lock = service->make_lock(c.at("lock").get<std::string>());
    std::mutex m;
    std::string lost_reason;
    lock.on_lost([&](std::error_code ec) {
        std::lock_guard lk(m);
        lost_reason = ec.message();
    });
    while (bench.ask(request_kind::next) == "go") {
        std::error_code ec;
        lock.lock(ec);
        if (ec) {
            bench.ask(request_kind::failed, 0, "acquire failed: " + redact_secrets(ec.message()));
            std::this_thread::sleep_for(std::min(milliseconds(100), ttl / 4));
            continue;
        }
        {
            std::lock_guard lk(m);
            lost_reason.clear();
        }
        bench.ask(request_kind::enter, lock.fencing_token());
        const auto why = critical_section(bench, write_interval, [&]() -> std::string {
            if (lock.is_held()) return "";
            std::lock_guard lk(m);
            return lost_reason.empty() ? std::string("is_held() turned false") : lost_reason;
        });
        bench.ask(request_kind::leave, 0, why);
        auto done = std::make_shared<std::promise<std::error_code>>();
        auto released = done->get_future();
        lock.async_unlock([done](std::error_code e) { done->set_value(e); });
        std::string outcome;
        if (released.wait_for(3 * ttl + milliseconds(2000)) != std::future_status::ready)
            outcome = "error: the release did not complete within " + std::to_string((3 * ttl).count() + 2000) + " ms";
        else if (const auto e = released.get(); e)
            outcome = (is_lock_lost(e) || e == make_error_code(errc::not_held) ? "lost: " : "error: ") +
                      redact_secrets(e.message());
        bench.ask(request_kind::released, 0, outcome);
    }
}

void naive_client(control_channel& bench, const nlohmann::json& c) {
    const auto redis = c.at("redis").get<std::string>();
    const auto port = static_cast<std::uint16_t>(std::stoi(redis.substr(redis.rfind(':') + 1)));
    naive_lock lock(c.at("backend").get<std::string>(), port, c.at("lock").get<std::string>(),
                    milliseconds(c.value("ttl_ms", 1000)));
    const auto write_interval = milliseconds(c.value("write_interval_ms", 50));
    while (bench.ask(request_kind::next) == "go") {
        lock.acquire([&] { bench.ask(request_kind::between); });
        std::int64_t token = 0;
        try {
            token = lock.take_token();
        } catch (const std::exception& e) {
            bench.ask(request_kind::failed, 0, std::string("INCR failed: ") + e.what());
            lock.release();
            continue;
        }
        bench.ask(request_kind::enter, token);
        const auto why = critical_section(bench, write_interval, [&]() -> std::string {
            return lock.lease_valid() ? "" : "its TTL has passed by its own clock";
        });
        bench.ask(request_kind::leave, 0, why);
        bench.ask(request_kind::released, 0, lock.release());
    }
}

int safety_client(const std::string& control, int index) {
    try {
        control_channel bench(control);
        const auto answer = bench.ask(request_kind::hello, index);
        if (!answer.starts_with("config ")) throw std::runtime_error("no configuration from the bench");
        const auto config = nlohmann::json::parse(answer.substr(7));
        if (is_anti_example(config.at("backend").get<std::string>())) naive_client(bench, config);
        else library_client(bench, config);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "zklock bench-safety-client " << index << ": " << redact_secrets(e.what()) << "\n";
        return 1;
    }
}

}  // namespace
}  // namespace zklock::cli::safety

namespace zklock::cli {

void add_safety_client(CLI::App& app, int& exit_code) {
    auto control = std::make_shared<std::string>();
    auto index = std::make_shared<int>(0);
    auto* cmd = app.add_subcommand("bench-safety-client", "one client process of zklock bench --safety (internal)");
    cmd->group("");  // hidden from --help
    cmd->add_option("--control", *control, "the bench's Unix socket")->required();
    cmd->add_option("--client", *index, "this client's index")->required();
    cmd->callback([control, index, &exit_code] { exit_code = safety::safety_client(*control, *index); });
}

}  // namespace zklock::cli
