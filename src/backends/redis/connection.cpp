#include "backends/redis/connection.hpp"

#include "support/async_support.hpp"
#include "support/endpoint_text.hpp"

#include <zklock/error.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>

namespace zklock::detail::redis {
namespace asio = boost::asio;

std::shared_ptr<own_context> own_thread_unless(const asio::any_io_executor& ex) {
    if (ex) return nullptr;
    return own_context::start_blocking_sigpipe();
}

struct connection::request {
    reply_handler handler;
};

namespace {

/// The connect was refused: nothing listens there (the context's I/O error says so).
bool connect_refused(const redisAsyncContext* ac) {
    return ac->err == REDIS_ERR_IO && std::strstr(ac->errstr, std::strerror(ECONNREFUSED));
}

} // namespace

connection::connection(strand_type strand, redis_address address, std::chrono::milliseconds connect_timeout,
                       std::chrono::milliseconds command_timeout)
    : strand_(std::move(strand)), address_(std::move(address)), connect_timeout_(connect_timeout),
      command_timeout_(command_timeout), timer_(strand_) {}

connection::~connection() {
    closed_ = true;
    if (auto* ac = ac_) {
        ac_ = nullptr;
        drop_error_ = make_error_code(errc::session_closed);
        redisAsyncFree(ac);  // runs the pending callbacks with no reply; cleanup releases the descriptor
    }
}

bool connection::ensure_open() {
    if (closed_) return false;
    if (ac_) return true;
    redisAsyncContext* ac = redisAsyncConnect(address_.host.c_str(), address_.port);
    if (!ac) return false;
    // hiredis made the socket without SOCK_CLOEXEC: a command a thread of this
    // process starts must not inherit it (a child could read or write our
    // Redis connection). Before anything else, so the window is the smallest.
    if (ac->c.fd >= 0) {
        const int flags = ::fcntl(ac->c.fd, F_GETFD);
        if (flags < 0 || ::fcntl(ac->c.fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
            redisAsyncFree(ac);
            return false;
        }
    }
    if (ac->err) {
        const bool refused = connect_refused(ac);
        redisAsyncFree(ac);
        log(log_level::warn, "cannot connect to " + endpoint() + ": " + (refused ? "connection refused" : "connect failed"));
        return false;
    }
    ac->data = this;
    ac->ev.data = this;
    ac->ev.addRead = &connection::ev_add_read;
    ac->ev.delRead = &connection::ev_del_read;
    ac->ev.addWrite = &connection::ev_add_write;
    ac->ev.delWrite = &connection::ev_del_write;
    ac->ev.cleanup = &connection::ev_cleanup;
    redisAsyncSetConnectCallback(ac, &connection::on_connect);
    ++generation_;
    ac_ = ac;
    connected_ = false;
    setup_error_ = {};
    reading_ = writing_ = read_armed_ = write_armed_ = false;
    sd_.emplace(strand_, ac->c.fd);
    connect_deadline_ = std::chrono::steady_clock::now() + connect_timeout_;
    ev_add_write(this);  // the non-blocking connect completes when the socket is writable
    arm_timer();
    // Sent first, pipelined: hiredis writes them once connected. Commands wait
    // in held_ until every one has succeeded, so none runs unauthenticated or
    // on the wrong db.
    const auto setup = redis_setup_commands(address_);
    setup_left_ = setup.size();
    ready_ = setup.empty();
    for (const auto& args : setup) {
        if (!send(args, &connection::on_setup_reply, nullptr)) {
            drop(make_error_code(errc::connection_loss));
            return false;
        }
        sent_.push_back(std::chrono::steady_clock::now());
    }
    return true;
}

bool connection::send(const std::vector<std::string>& args, void (*callback)(redisAsyncContext*, void*, void*),
                      void* privdata) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    return redisAsyncCommandArgv(ac_, callback, privdata, static_cast<int>(argv.size()), argv.data(), lens.data()) ==
           REDIS_OK;
}

void connection::on_setup_reply(redisAsyncContext* ac, void* r, void*) {
    auto* self = static_cast<connection*>(ac->data);
    if (!r) return;  // the connection is going away: the held commands learn why at cleanup
    if (!self->sent_.empty()) self->sent_.pop_front();
    const auto* reply = static_cast<const redisReply*>(r);
    if (self->setup_error_) return;
    if (reply->type == REDIS_REPLY_ERROR) {
        // Only the code is kept: the server's text may echo what we sent.
        self->setup_error_ = redis_error_code(reply->str ? std::string_view(reply->str, reply->len) : std::string_view());
        // Dropped on the strand, not inside hiredis's callback; the held commands
        // then fail with setup_error_ (failure_of), none of them sent.
        asio::post(self->strand_, [me = self->shared_from_this(), gen = self->generation_] {
            if (me->generation_ == gen && me->ac_) me->drop(me->setup_error_);
        });
        return;
    }
    if (--self->setup_left_ > 0) return;
    self->ready_ = true;
    auto held = std::move(self->held_);
    self->held_.clear();
    for (auto& h : held) self->send_now(h.args, std::move(h.handler));
}

void connection::send_now(const std::vector<std::string>& args, reply_handler handler) {
    if (!handler) {  // a (UN)SUBSCRIBE: its replies go to the push handler
        send(args, &connection::on_push, this);
        return;
    }
    auto* req = new request{std::move(handler)};
    if (!send(args, &connection::on_reply, req)) {
        std::unique_ptr<request> owned(req);
        asio::post(strand_, [h = std::move(owned->handler)] { h(make_error_code(errc::connection_loss), {}); });
        return;
    }
    sent_.push_back(std::chrono::steady_clock::now());
    arm_timer();
}

void connection::command(const std::vector<std::string>& args, reply_handler handler) {
    auto fail = [&](std::error_code ec) { asio::post(strand_, [h = std::move(handler), ec] { h(ec, {}); }); };
    if (closed_) return fail(make_error_code(errc::session_closed));
    if (!ensure_open()) return fail(std::make_error_code(std::errc::connection_refused));
    if (!ready_) {
        held_.push_back({args, std::move(handler)});
        return;
    }
    send_now(args, std::move(handler));
}

bool connection::subscribe_command(const char* verb, const std::string& channel) {
    if (!ensure_open()) return false;
    if (!ready_) {
        held_.push_back({{verb, channel}, nullptr});
        return true;
    }
    return send({verb, channel}, &connection::on_push, this);
}

void connection::close(bool graceful) {
    closed_ = true;
    timer_.cancel();
    timer_armed_ = false;
    if (!ac_) return;
    // A connection still connecting has nothing in flight to wait for (hiredis
    // refuses what is queued once disconnecting): it ends at once.
    if (!graceful || !connected_) return drop(make_error_code(errc::session_closed));
    redisAsyncDisconnect(ac_);  // frees it once the pending replies are in (at once when none)
    if (!ac_) return;
    // A server that answers nothing more (a partition) must not keep the
    // connection, and the service's io_context with it, forever.
    timer_.expires_after(command_timeout_);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec && self->ac_) self->drop(make_error_code(errc::session_closed));
    });
}

std::error_code connection::failure_of(const redisAsyncContext* ac) const {
    if (drop_error_) return drop_error_;
    if (setup_error_) return setup_error_;
    if (closed_) return make_error_code(errc::session_closed);
    if (connect_refused(ac)) return std::make_error_code(std::errc::connection_refused);
    return make_error_code(errc::connection_loss);
}

void connection::on_reply(redisAsyncContext* ac, void* r, void* privdata) {
    std::unique_ptr<request> req(static_cast<request*>(privdata));
    auto* self = static_cast<connection*>(ac->data);
    std::error_code ec;
    reply rep;
    if (r) {
        if (!self->sent_.empty()) self->sent_.pop_front();
        rep = convert(static_cast<const redisReply*>(r));
        if (self->setup_error_) ec = self->setup_error_;  // refused before it ran (NOAUTH, ...)
        else if (rep.type == reply::kind::error) ec = redis_error_code(rep.str);
    } else {
        ec = self->failure_of(ac);
    }
    asio::post(self->strand_, [h = std::move(req->handler), ec, rep = std::move(rep)]() mutable { h(ec, std::move(rep)); });
}

void connection::on_push(redisAsyncContext*, void* r, void* privdata) {
    auto* self = static_cast<connection*>(privdata);
    if (!r) return;  // the connection is going away: the disconnect handler tells
    auto push = push_of(static_cast<const redisReply*>(r));
    if (!push) return;
    auto me = self->weak_from_this().lock();
    if (!me) return;
    asio::post(self->strand_, [me, push = std::move(*push)] {
        if (me->push_) me->push_(push.kind, push.channel, push.payload);
    });
}

void connection::on_connect(const redisAsyncContext* ac, int status) {
    auto* self = static_cast<connection*>(ac->data);
    if (status == REDIS_OK && self->ac_ == ac) {
        self->connected_ = true;
        self->arm_timer();
        self->log(log_level::info, "connected to " + self->endpoint());
    }
}

void connection::ev_add_read(void* p) {
    auto* self = static_cast<connection*>(p);
    self->reading_ = true;
    self->arm_read();
}
void connection::ev_del_read(void* p) { static_cast<connection*>(p)->reading_ = false; }
void connection::ev_add_write(void* p) {
    auto* self = static_cast<connection*>(p);
    self->writing_ = true;
    self->arm_write();
}
void connection::ev_del_write(void* p) { static_cast<connection*>(p)->writing_ = false; }

void connection::ev_cleanup(void* p) {
    auto* self = static_cast<connection*>(p);
    ++self->generation_;
    self->reading_ = self->writing_ = self->read_armed_ = self->write_armed_ = false;
    const bool was_connected = self->connected_;
    self->connected_ = false;
    // Commands that waited for the setup were never sent: they fail as it did.
    const auto why = self->ac_ ? self->failure_of(self->ac_)
                               : self->drop_error_ ? self->drop_error_ : make_error_code(errc::session_closed);
    if (!self->closed_) {
        const auto where = self->endpoint();
        if (self->setup_error_)  // the code only: the server's text may echo the credentials
            self->log(log_level::error, where + " refused the connection's setup (AUTH or SELECT): " + why.message());
        else if (was_connected && self->drop_error_ == make_error_code(errc::connection_loss))
            self->log(log_level::warn, "connection to " + where + " dropped: no reply within the command timeout (" +
                                           std::to_string(self->command_timeout_.count()) + " ms)");
        else if (was_connected) self->log(log_level::warn, "connection to " + where + " lost: " + why.message());
        else if (why == make_error_code(errc::timeout))
            self->log(log_level::warn, "cannot connect to " + where + ": no answer within the connect timeout (" +
                                           std::to_string(self->connect_timeout_.count()) + " ms)");
        else self->log(log_level::warn, "cannot connect to " + where + ": " + why.message());
    }
    auto held = std::move(self->held_);
    self->held_.clear();
    for (auto& h : held)
        if (h.handler) asio::post(self->strand_, [handler = std::move(h.handler), why] { handler(why, {}); });
    self->ac_ = nullptr;
    self->ready_ = false;
    self->sent_.clear();
    if (self->closed_) self->timer_.cancel();  // a closing connection's bound on its last replies
    if (self->sd_) {
        boost::system::error_code ignored;
        self->sd_->cancel(ignored);
        (void)self->sd_->release();  // hiredis closes its own socket
        self->sd_.reset();
    }
    if (auto me = self->weak_from_this().lock()) {
        asio::post(self->strand_, [me] {
            if (me->on_disconnect_) me->on_disconnect_();
        });
    }
}

void connection::arm_read() {
    if (read_armed_ || !sd_) return;
    read_armed_ = true;
    sd_->async_wait(asio::posix::stream_descriptor::wait_read,
                    asio::bind_executor(strand_, [self = shared_from_this(), gen = generation_](boost::system::error_code ec) {
                        if (gen != self->generation_) return;
                        self->read_armed_ = false;
                        if (ec || !self->ac_) return;
                        if (self->reading_) redisAsyncHandleRead(self->ac_);
                        if (gen == self->generation_ && self->reading_) self->arm_read();
                    }));
}

void connection::arm_write() {
    if (write_armed_ || !sd_) return;
    write_armed_ = true;
    sd_->async_wait(asio::posix::stream_descriptor::wait_write,
                    asio::bind_executor(strand_, [self = shared_from_this(), gen = generation_](boost::system::error_code ec) {
                        if (gen != self->generation_) return;
                        self->write_armed_ = false;
                        if (ec || !self->ac_) return;
                        if (self->writing_) redisAsyncHandleWrite(self->ac_);
                        if (gen == self->generation_ && self->writing_) self->arm_write();
                    }));
}

std::string connection::endpoint() const {
    return endpoint_text(address_.host, std::to_string(address_.port)) + " (" + role_ + ")";
}

void connection::drop(std::error_code why) {
    auto* ac = ac_;
    if (!ac) return;
    drop_error_ = why;
    redisAsyncFree(ac);
    drop_error_ = {};
}

void connection::arm_timer() {
    if (!ac_ || closed_) return;
    std::chrono::steady_clock::time_point due;
    if (!connected_) due = connect_deadline_;
    else if (!sent_.empty()) due = sent_.front() + command_timeout_;
    else return;
    if (timer_armed_ && timer_.expiry() <= due) return;
    timer_armed_ = true;
    timer_.expires_at(due);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec) return;  // replaced by a sooner one, or closed
        self->timer_armed_ = false;
        if (!self->ac_) return;
        const auto now = std::chrono::steady_clock::now();
        if (!self->connected_ && now >= self->connect_deadline_) return self->drop(make_error_code(errc::timeout));
        if (self->connected_ && !self->sent_.empty() && now >= self->sent_.front() + self->command_timeout_)
            return self->drop(make_error_code(errc::connection_loss));
        self->arm_timer();
    });
}

} // namespace zklock::detail::redis
