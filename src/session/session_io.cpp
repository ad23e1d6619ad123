// Driving the ZooKeeper C client from Asio: the socket and the timer the
// client asks for (zookeeper_interest), zookeeper_process on each event, the
// waiters for a connection, and the calls made once a hold has settled.
#include "session/session_impl.hpp"
#include "fsm/client_log.hpp"
#include "fsm/server_rotation.hpp"
#include "support/io_seam.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace zklock::detail {
namespace asio = boost::asio;

thread_local std::uint64_t delivered_here = 0;

void session_impl::assign_descriptor() {
    const int mine = own_descriptor(fd_);
    boost::system::error_code ec;
    if (mine >= 0) desc_.assign(mine, ec);
    if (mine < 0 || ec) {
        if (mine >= 0) ::close(mine);
        fd_ = -1;  // only the timer drives the client until its socket changes
    }
}

void session_impl::pump(bool may_write) {
    if (!zh_ || in_process_ || closing_) return;
    // After a round in which every address refused, the C client is not asked
    // for its next connect (it would make it at once) until the attempt is due.
    if (all_refused_ && clock::now() < next_attempt_ && zoo_state(zh_) != ZOO_CONNECTED_STATE)
        return run_client_at(next_attempt_);
    const log_scope scope(this);
    if (steer_pending_) steer_to_untried();
    int fd = -1;
    int interest = 0;
    timeval tv{};
    int rc = zookeeper_interest(zh_, &fd, &interest, &tv);
    // Connected on the socket of the last look, with requests to send: the C
    // client sends them now rather than after a wait for the socket to turn
    // writable, which it nearly always is (each wait costs an epoll_ctl and a
    // wake-up). Only where the C client may call back (may_write: not inside
    // a request's submit, whose caller is in the middle of its own work; there
    // the send is put off to the end of the turn, flush_soon). What the kernel
    // did not take is waited for.
    const bool can_send = (interest & ZOOKEEPER_WRITE) && rc == ZOK && fd >= 0 && fd == fd_ && socket_steady_ &&
                          !write_pending_ && zoo_state(zh_) == ZOO_CONNECTED_STATE;
    if (can_send && !may_write) {
        flush_soon();
        interest &= ~ZOOKEEPER_WRITE;
    } else if (can_send) {
        in_process_ = true;
        zookeeper_process(zh_, ZOOKEEPER_WRITE);
        in_process_ = false;
        if (!zh_ || closing_) return;
        fd = -1;
        interest = 0;
        rc = zookeeper_interest(zh_, &fd, &interest, &tv);
    }
    if (rc != ZOK && rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT) {
        // ZINVALIDSTATE: the handle is dead; the session watcher handles it.
        if (rc == ZINVALIDSTATE && state_ != session_state::closed && !closing_) {
            const int zstate = zoo_state(zh_);
            if (zstate == ZOO_EXPIRED_SESSION_STATE || zstate == ZOO_AUTH_FAILED_STATE) return;
        }
    }
    // The C client closes its socket on connection loss and opens a new one,
    // which may get the same number: compare the socket itself, not the number,
    // or epoll would keep waiting on the closed one. A session connected now and
    // at the last look, on the same number, still has the same socket: a new one
    // is opened by zookeeper_interest and is not connected before its handshake's
    // reply has been read, so at least one look in between saw another state and
    // compared. That spares the fstat on nearly every turn.
    const bool connected_now = zoo_state(zh_) == ZOO_CONNECTED_STATE;
    std::uint64_t socket_id = socket_id_;
    if (fd >= 0 && !(fd == fd_ && connected_now && socket_steady_)) {
        struct stat st {};
        if (::fstat(fd, &st) == 0) socket_id = static_cast<std::uint64_t>(st.st_ino);
        else fd = -1;  // already closed: only the timer drives the client until it reconnects
    }
    if (fd < 0) socket_id = 0;
    if (fd != fd_ || socket_id != socket_id_) {
        socket_id_ = socket_id;
        ++fd_generation_;
        read_pending_ = write_pending_ = false;
        write_waited_ = false;
        if (desc_.is_open()) drop_descriptor(desc_);  // ours: the C client closes its own socket
        fd_ = fd;
        if (fd_ >= 0) {
            // Debian's C client opens its socket without SOCK_CLOEXEC: a child the
            // process execs must not inherit the session's connection.
            if (const int flags = ::fcntl(fd_, F_GETFD); flags >= 0 && !(flags & FD_CLOEXEC))
                ::fcntl(fd_, F_SETFD, flags | FD_CLOEXEC);
            assign_descriptor();
        }
    }
    // Connected now on a socket whose connect was waited for as writable: its
    // registration with the reactor asks for writability from then on, and
    // every re-armed read wait would report it (a wake-up for nothing per
    // reply). Registered again, for reading; a write wait adds it back when
    // the kernel once takes less than was sent.
    if (connected_now && !socket_steady_ && fd_ >= 0 && write_waited_) {
        ++fd_generation_;
        read_pending_ = write_pending_ = false;
        drop_descriptor(desc_);
        assign_descriptor();
        write_waited_ = false;
    }
    socket_steady_ = connected_now && fd_ >= 0;
    if (fd_ >= 0) {
        const auto gen = fd_generation_;
        if ((interest & ZOOKEEPER_READ) && !read_pending_) {
            read_pending_ = true;
            desc_.async_wait(asio::posix::descriptor_base::wait_read,
                             [self = shared_from_this(), gen](boost::system::error_code ec) {
                                 if (gen != self->fd_generation_) return;
                                 self->read_pending_ = false;
                                 if (!ec) self->process(ZOOKEEPER_READ);
                             });
        }
        if ((interest & ZOOKEEPER_WRITE) && !write_pending_) {
            write_pending_ = true;
            write_waited_ = true;
            desc_.async_wait(asio::posix::descriptor_base::wait_write,
                             [self = shared_from_this(), gen](boost::system::error_code ec) {
                                 if (gen != self->fd_generation_) return;
                                 self->write_pending_ = false;
                                 if (!ec) self->process(ZOOKEEPER_WRITE);
                             });
        }
    }
    run_client_at(clock::now() + std::chrono::seconds(tv.tv_sec) +
                  std::chrono::microseconds(tv.tv_usec));
}

void session_impl::run_client_at(std::chrono::steady_clock::time_point deadline) {
    if (!timer_deadline_ || deadline < *timer_deadline_) {
        timer_deadline_ = deadline;
        timer_.expires_at(deadline);
        timer_.async_wait([self = shared_from_this(), deadline](boost::system::error_code ec) {
            if (ec || self->timer_deadline_ != deadline) return;
            self->timer_deadline_.reset();
            self->process(0);
        });
    }
}

void session_impl::process(int events) {
    if (!zh_ || closing_) return;
    if (events & ZOOKEEPER_READ) last_receive_ = clock::now();
    in_process_ = true;
    const log_scope scope(this);
    auto mark = delivered_here;
    zookeeper_process(zh_, events);
    // The C client reads one reply per call, and the server often sent more
    // (a pipelined delete, create and listing are answered together): read on
    // while each call delivers something and a request still awaits its
    // answer, so that the later replies cost no wait (an epoll_ctl and an
    // epoll_wait each). A call that finds nothing costs one recv; once the
    // last answer is in, none is made (a notification that came with it is
    // seen by the wait, which asks the kernel afresh).
    if (events & ZOOKEEPER_READ) {
        for (int i = 0; i < 64 && delivered_here != mark && awaiting_ > 0 && zh_ && !closing_ &&
                        zoo_state(zh_) == ZOO_CONNECTED_STATE;
             ++i) {
            mark = delivered_here;
            zookeeper_process(zh_, ZOOKEEPER_READ);
        }
    }
    in_process_ = false;
    pump(true);
}

void session_impl::flush_soon() {
    if (flush_due_) return;
    flush_due_ = true;
    // Inside a blocking call's inline turn (run_or_post), at its end; inside
    // a handler, right after it (a post from a handler wakes nobody).
    if (own_ && own_->inline_running && own_->baton.driven_here()) return;
    post([this] { flush_now(); });
}

void session_impl::flush_now() {
    if (!flush_due_) return;
    flush_due_ = false;
    pump(true);
}

void session_impl::after_settling(std::function<void()> fn) {
    if (closing_) return;
    const bool idle = settling_.empty();
    settling_.emplace_back(clock::now() + settle_delay, std::move(fn));
    if (idle) arm_settle_timer(settling_.front().first);  // otherwise it is set for an earlier call
}

void session_impl::arm_settle_timer(clock::time_point at) {
    settle_timer_.expires_at(at);
    settle_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec) self->settle();
    });
}

void session_impl::settle() {
    const auto now = clock::now();
    // A call may add another: it goes to the back, due later.
    while (!settling_.empty() && settling_.front().first <= now && !closing_) {
        auto fn = std::move(settling_.front().second);
        settling_.pop_front();
        fn();
    }
    // Calls made one after another (a lock taken and released in a loop) would
    // each wake the timer: the next turn comes a delay later at the earliest
    // and takes every call due by then, so a hold settles within two delays
    // and a loop of short holds wakes the timer once a delay (each wake two
    // timerfd_settime and, often, a context switch).
    if (!settling_.empty() && !closing_) arm_settle_timer(std::max(settling_.front().first, now + settle_delay));
}

std::uint64_t session_impl::when_connected(std::function<void(std::error_code)> fn) {
    if (state_ == session_state::closed) {
        post([fn = std::move(fn), ec = close_reason_ ? close_reason_ : make_error_code(errc::session_closed)] { fn(ec); });
        return 0;
    }
    if (connected()) {
        fn({});
        return 0;
    }
    const auto id = next_id_++;
    connect_waiters_.emplace(id, std::move(fn));
    return id;
}

void session_impl::cancel_connect_waiter(std::uint64_t id) { connect_waiters_.erase(id); }

std::uint64_t session_impl::when_all_refused(std::function<void()> fn) {
    if (all_refused_) {
        post(std::move(fn));
        return 0;
    }
    const auto id = next_id_++;
    refusal_waiters_.emplace(id, std::move(fn));
    return id;
}

void session_impl::cancel_refusal_waiter(std::uint64_t id) { refusal_waiters_.erase(id); }

void session_impl::note_refused(std::string address) {
    if (connected() || addresses_ == 0) return;
    refused_.insert(std::move(address));
    if (refused_.size() < addresses_) {
        steer_pending_ = true;
        return;
    }
    refused_.clear();
    steer_pending_ = false;
    // A round in which every address refused: the C client would try again at
    // once, round after round, as fast as the kernel refuses (a busy loop while
    // nothing listens). The next round waits, 10 ms at first, doubling up to
    // 200 ms: a server that comes back is still connected within 200 ms.
    all_refused_ = true;
    refusal_backoff_ = refusal_backoff_.count() == 0 ? std::chrono::milliseconds(10)
                                                     : std::min(2 * refusal_backoff_, std::chrono::milliseconds(200));
    next_attempt_ = clock::now() + refusal_backoff_;
    // Called inside a C client call: the waiters run after it.
    auto waiters = std::move(refusal_waiters_);
    refusal_waiters_.clear();
    post([waiters = std::move(waiters)] {
        for (const auto& [id, w] : waiters) w();
    });
}

void session_impl::steer_to_untried() {
    steer_pending_ = false;
    if (!zh_ || refused_.empty() || zoo_state(zh_) == ZOO_CONNECTED_STATE) return;
    // The C client's list, read by one full turn of its position, which ends
    // where it began. A turn that does not come back (the C client between
    // two server lists, choosing at random) leaves the choice to it.
    const auto current = [this] {
        const char* at = zoo_get_current_server(zh_);
        return std::string(endpoint_text(at ? at : ""));
    };
    const auto start = current();
    std::vector<std::string> ring{start};
    bool turned = false;
    for (std::size_t i = 0; i < 2 * addresses_ + 2 && !turned; ++i) {
        zoo_cycle_next_server(zh_);
        auto at = current();
        turned = at == start;
        if (!turned) ring.push_back(std::move(at));
    }
    if (!turned) return;
    if (const auto steps = steps_to_untried(ring, refused_)) {
        for (std::size_t i = 0; i < *steps; ++i) zoo_cycle_next_server(zh_);
    }
}

} // namespace zklock::detail
