#include "safety/resource.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace zklock::cli::safety {

struct safety_resource::client_state {
    int fd = -1;
    int index = -1;  ///< from hello
    std::string buffer;
    std::optional<std::size_t> section;       ///< open critical section (index into sections_)
    std::optional<std::size_t> last_section;  ///< for `released`
    bool killed = false;
};

namespace {

[[noreturn]] void fail(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

safety_resource::safety_resource(const std::filesystem::path& socket_path, std::vector<nlohmann::json> configs,
                                 int writes_per_section, trigger at, clock_type::duration settle, int signal_fd,
                                 std::atomic<bool>& interrupted)
    : configs_(std::move(configs)), writes_per_section_(writes_per_section), trigger_(at), settle_(settle),
      signal_fd_(signal_fd), interrupted_(interrupted) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const auto path = socket_path.string();
    if (path.size() >= sizeof addr.sun_path) throw std::runtime_error("socket path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) fail("socket");
    if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0) {
        const int err = errno;
        ::close(listen_fd_);
        throw std::system_error(err, std::generic_category(), "listen on " + path);
    }
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) {
        const int err = errno;
        ::close(listen_fd_);
        throw std::system_error(err, std::generic_category(), "eventfd");
    }
    thread_ = std::thread([this] { serve(); });
}

safety_resource::~safety_resource() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
    thread_.join();
    for (const auto& [fd, c] : clients_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_fd_);
}

void safety_resource::serve() {
    while (true) {
        std::vector<pollfd> fds = {{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
        if (signal_fd_ >= 0 && !interrupted_) fds.push_back({signal_fd_, POLLIN, 0});
        {
            std::lock_guard lk(mutex_);
            for (const auto& [fd, c] : clients_) fds.push_back({fd, POLLIN, 0});
        }
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            note("poll failed: " + std::string(std::strerror(errno)));
            return;
        }
        if (fds[0].revents) return;
        if (fds[1].revents) accept_clients();
        for (std::size_t i = 2; i < fds.size(); ++i) {
            if (!fds[i].revents) continue;
            if (fds[i].fd == signal_fd_) {
                signalfd_siginfo info{};
                while (::read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
                }
                std::lock_guard lk(mutex_);
                interrupted_ = true;
                changed_.notify_all();
            } else {
                read_client(fds[i].fd);
            }
        }
    }
}

void safety_resource::accept_clients() {
    while (true) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;
        std::lock_guard lk(mutex_);
        auto c = std::make_unique<client_state>();
        c->fd = fd;
        clients_[fd] = std::move(c);
    }
}

void safety_resource::read_client(int fd) {
    char buf[4096];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return close_client(fd);
        if (n < 0) return;
        std::lock_guard lk(mutex_);
        auto& c = *clients_.at(fd);
        c.buffer.append(buf, static_cast<std::size_t>(n));
        for (auto end = c.buffer.find('\n'); end != std::string::npos; end = c.buffer.find('\n')) {
            const auto line = c.buffer.substr(0, end);
            c.buffer.erase(0, end + 1);
            if (const auto reply = handle(c, line)) send_line(fd, *reply);
        }
    }
}

std::optional<std::string> safety_resource::handle(client_state& c, const std::string& line) {
    const auto now = clock_type::now();
    const auto r = parse_request(line);
    const std::string who = "client " + std::to_string(c.index);
    if (!r) {
        note(who + " sent an unexpected line");
        return "ok";
    }
    switch (r->kind) {
    case request_kind::hello:
        if (r->number < 0 || static_cast<std::size_t>(r->number) >= configs_.size()) return "config {}";
        c.index = static_cast<int>(r->number);
        return "config " + configs_[static_cast<std::size_t>(c.index)].dump();
    case request_kind::next: return answer_next(phase_) == answer::go ? "go" : "stop";
    case request_kind::between:
        if (phase_.fault_armed && trigger_ == trigger::between_commands && !triggered_client_) {
            triggered_client_ = c.index;
            held_back_fd_ = c.fd;
            changed_.notify_all();
            return std::nullopt;
        }
        return "go";
    case request_kind::failed: note(who + ": " + r->text); return "ok";
    case request_kind::enter: {
        for (const auto& [fd, other] : clients_)
            if (other.get() != &c && other->section) sections_[*other->section].overtaken = true;
        section_ids_.push_back(ledger_.enter("c" + std::to_string(c.index), r->number, now));
        section_record s;
        s.client = c.index;
        s.token = r->number;
        s.entered = now;
        sections_.push_back(s);
        c.section = c.last_section = sections_.size() - 1;
        changed_.notify_all();
        return "ok";
    }
    case request_kind::ready: {
        phase_.fault_settled = phase_.fault_ended && now >= fault_start_ + settle_;
        faulted_section f;
        f.is_faulted = c.section && faulted_section_ == c.section;
        f.wrote_after_fault = wrote_after_fault_;
        const auto a = answer_ready(r->number, writes_per_section_, trigger_ == trigger::second_write,
                                    phase_, f);
        if (a == answer::hold_back && !triggered_client_ && c.section) {
            triggered_client_ = c.index;
            faulted_section_ = c.section;
            held_back_fd_ = c.fd;
            changed_.notify_all();
            return std::nullopt;
        }
        return a == answer::end ? "end" : "go";
    }
    case request_kind::write: {
        if (!c.section) {
            note(who + " wrote outside a critical section");
            return "refused";
        }
        if (faulted_section_ == c.section && phase_.fault_ended) wrote_after_fault_ = true;
        const bool accepted = ledger_.write(section_ids_[*c.section], now);
        judge_.write(*c.section, accepted);
        return accepted ? "accepted" : "refused";
    }
    case request_kind::leave:
        if (c.section) {
            ledger_.leave(section_ids_[*c.section], now);
            sections_[*c.section].left = now;
            sections_[*c.section].lost_reason = r->text;
            c.section.reset();
        }
        return "ok";
    case request_kind::released:
        if (c.last_section) sections_[*c.last_section].release_error = r->text;
        return "ok";
    }
    return "ok";
}

void safety_resource::close_client(int fd) {
    std::lock_guard lk(mutex_);
    const auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    auto& c = *it->second;
    if (c.section) {  // it died in its critical section
        const auto now = clock_type::now();
        ledger_.leave(section_ids_[*c.section], now);
        sections_[*c.section].left = now;
        sections_[*c.section].holder_killed = c.killed;
        if (!c.killed && !phase_.stopping) note("client " + std::to_string(c.index) + " exited in its critical section");
    }
    if (held_back_fd_ == fd) held_back_fd_.reset();
    ::close(fd);
    clients_.erase(it);
    changed_.notify_all();
}

void safety_resource::send_line(int fd, const std::string& line) {
    const std::string data = line + "\n";
    // The answers are short and each client reads its answer before it asks
    // again: the socket buffer always has room.
    if (::send(fd, data.data(), data.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(data.size()))
        note("an answer could not be sent: " + std::string(std::strerror(errno)));
}

void safety_resource::note(const std::string& what) { ++notes_[what.substr(0, 300)]; }

bool safety_resource::wait_grants(std::size_t n, clock_type::time_point after, clock_type::time_point deadline) {
    std::unique_lock lk(mutex_);
    return changed_.wait_until(lk, deadline, [&] {
        std::size_t count = 0;
        for (const auto& s : sections_)
            if (s.entered >= after) ++count;
        return interrupted_ || count >= n;
    }) && !interrupted_;
}

bool safety_resource::wait_until(clock_type::time_point deadline) {
    std::unique_lock lk(mutex_);
    changed_.wait_until(lk, deadline, [&] { return interrupted_.load(); });
    return !interrupted_;
}

void safety_resource::arm() {
    std::lock_guard lk(mutex_);
    phase_.fault_armed = true;
}

std::optional<int> safety_resource::wait_trigger(clock_type::time_point deadline) {
    std::unique_lock lk(mutex_);
    changed_.wait_until(lk, deadline, [&] { return interrupted_ || triggered_client_.has_value(); });
    if (interrupted_) return std::nullopt;
    return triggered_client_;
}

void safety_resource::fault_started() {
    std::lock_guard lk(mutex_);
    fault_start_ = clock_type::now();
    phase_.fault_armed = false;
    phase_.fault_started = true;
}

void safety_resource::release_held_back() {
    std::lock_guard lk(mutex_);
    if (held_back_fd_) send_line(*held_back_fd_, "go");
    held_back_fd_.reset();
}

void safety_resource::fault_ended() {
    std::lock_guard lk(mutex_);
    phase_.fault_ended = true;
}

void safety_resource::client_killed(int client) {
    std::lock_guard lk(mutex_);
    const auto now = clock_type::now();
    for (auto& [fd, c] : clients_) {
        if (c->index != client) continue;
        c->killed = true;
        // Its section ends now, not when its socket's end of file is read: the
        // server may grant the next holder first, and a dead process writes nothing.
        if (c->section) {
            ledger_.leave(section_ids_[*c->section], now);
            sections_[*c->section].left = now;
            sections_[*c->section].holder_killed = true;
            c->section.reset();
        }
    }
}

void safety_resource::stop_run() {
    std::lock_guard lk(mutex_);
    phase_.stopping = true;
}

lab::safety_summary safety_resource::summary() const { return ledger_.summary(); }

grant_order_judge safety_resource::writes() const {
    std::lock_guard lk(mutex_);
    return judge_;
}

std::vector<section_record> safety_resource::sections() const {
    std::lock_guard lk(mutex_);
    return sections_;
}

std::vector<std::string> safety_resource::notes() const {
    std::lock_guard lk(mutex_);
    std::vector<std::string> out;
    for (const auto& [what, count] : notes_) out.push_back(count > 1 ? what + " (" + std::to_string(count) + " times)" : what);
    return out;
}

}  // namespace zklock::cli::safety
