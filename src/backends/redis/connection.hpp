// One hiredis asynchronous connection driven by Asio: the redisAsyncContext's
// event hooks (addRead/delRead/addWrite/delWrite/cleanup) become waits on a
// posix::stream_descriptor. hiredis owns the socket: the descriptor is
// release()d, never closed, when hiredis cleans up. Every member runs on the
// strand, and so does every hiredis call; replies are posted back to the strand,
// never handled inside hiredis's callback.
//
// Every connection it opens (the first, and each one after a failure) is
// close-on-exec at once (hiredis 0.14 opens its sockets without SOCK_CLOEXEC)
// and sends its setup commands first: AUTH when the address has a password,
// SELECT when it names a db. A refused AUTH (WRONGPASS, ...) fails every
// command of that connection with errc::auth_failed / errc::no_auth (never
// the server's text, never the password) and drops it.
#pragma once

#include "backends/redis/redis_address.hpp"
#include "backends/redis/reply.hpp"
#include <zklock/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

struct redisAsyncContext;

namespace zklock::detail {
struct own_context;
}

namespace zklock::detail::redis {

/// The io_context and thread a Redis service runs on when the user gives no
/// executor (null when `ex` is set). The thread blocks SIGPIPE: hiredis writes
/// with write(2), and a server that closed the connection must give EPIPE, not
/// kill the process.
std::shared_ptr<own_context> own_thread_unless(const boost::asio::any_io_executor& ex);

using strand_type = boost::asio::strand<boost::asio::any_io_executor>;

/// One connection to one Redis server (lazily connected, reconnected on the next
/// command after a failure). Strand only.
class connection : public std::enable_shared_from_this<connection> {
public:
    using reply_handler = std::function<void(std::error_code, reply)>;
    /// (kind, channel, payload) of a pub/sub push: "message" (payload: the message),
    /// "subscribe", "unsubscribe" (payload empty).
    using push_handler =
        std::function<void(const std::string& kind, const std::string& channel, const std::string& payload)>;
    /// Receives the connection's events (connected, a connect failed, the
    /// connection lost or its AUTH refused), each with its level and a message
    /// that names the server as host:port, never its credentials.
    using log_handler = std::function<void(log_level, const std::string&)>;

    connection(strand_type strand, redis_address address, std::chrono::milliseconds connect_timeout,
               std::chrono::milliseconds command_timeout);
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// Sends a command; `handler` is posted to the strand with the reply, or with
    /// an error: the connection failed (errc::connection_loss: the command may or
    /// may not have run), no reply within the command timeout (the connection is
    /// then dropped, errc::connection_loss), the connection's AUTH was refused
    /// (errc::auth_failed, errc::no_auth), an error reply (redis_error_code():
    /// errc::no_auth for NOAUTH/NOPERM, else std::errc::protocol_error).
    void command(const std::vector<std::string>& args, reply_handler handler);

    /// Pub/sub (a connection used only for that): pushes go to the push handler.
    void set_push_handler(push_handler h) { push_ = std::move(h); }
    /// Called (posted) when a connection ends, whatever the reason.
    void set_disconnect_handler(std::function<void()> h) { on_disconnect_ = std::move(h); }
    bool subscribe_command(const char* verb, const std::string& channel);
    /// Where the connection's events go (see log_handler); `role` says which of
    /// a master's connections this is ("commands", "subscriber").
    void set_log(log_handler h, std::string role) {
        log_ = std::move(h);
        role_ = std::move(role);
    }

    bool connected() const noexcept { return ac_ != nullptr && connected_; }
    bool open() const noexcept { return ac_ != nullptr; }
    /// Connects now if there is no connection; false when it fails at once.
    bool ensure_open();
    /// Graceful (true: after the pending replies) or immediate close. Further
    /// commands fail with errc::session_closed.
    void close(bool graceful);

private:
    struct request;
    static void on_reply(redisAsyncContext* ac, void* r, void* privdata);
    static void on_setup_reply(redisAsyncContext* ac, void* r, void* privdata);
    bool send(const std::vector<std::string>& args, void (*callback)(redisAsyncContext*, void*, void*), void* privdata);
    void send_now(const std::vector<std::string>& args, reply_handler handler);
    static void on_push(redisAsyncContext* ac, void* r, void* privdata);
    static void on_connect(const redisAsyncContext* ac, int status);
    static void ev_add_read(void* p);
    static void ev_del_read(void* p);
    static void ev_add_write(void* p);
    static void ev_del_write(void* p);
    static void ev_cleanup(void* p);

    void arm_read();
    void arm_write();
    void drop(std::error_code why);
    void arm_timer();
    std::error_code failure_of(const redisAsyncContext* ac) const;
    /// "host:port (role)", an IPv6 host in brackets: the server as the log names it.
    std::string endpoint() const;
    void log(log_level level, const std::string& message) const {
        if (log_) log_(level, message);
    }

    strand_type strand_;
    redis_address address_;
    std::chrono::milliseconds connect_timeout_;
    std::chrono::milliseconds command_timeout_;
    redisAsyncContext* ac_ = nullptr;
    std::optional<boost::asio::posix::stream_descriptor> sd_;
    std::uint64_t generation_ = 0;  // of ac_: waits of a freed context do nothing
    bool connected_ = false;
    bool reading_ = false, writing_ = false, read_armed_ = false, write_armed_ = false;
    bool closed_ = false;
    std::error_code drop_error_;
    std::error_code setup_error_;  // of the current connection: its AUTH or SELECT was refused
    std::size_t setup_left_ = 0;   // setup replies still to come
    bool ready_ = false;           // every setup command succeeded: commands go out at once
    struct held_command {
        std::vector<std::string> args;
        reply_handler handler;  // empty: a (UN)SUBSCRIBE
    };
    std::vector<held_command> held_;  // sent once ready_
    std::chrono::steady_clock::time_point connect_deadline_{};
    std::deque<std::chrono::steady_clock::time_point> sent_;  // of the commands awaiting a reply
    boost::asio::steady_timer timer_;
    bool timer_armed_ = false;
    push_handler push_;
    std::function<void()> on_disconnect_;
    log_handler log_;
    std::string role_;
};

} // namespace zklock::detail::redis
