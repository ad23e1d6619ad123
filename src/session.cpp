#include "session_impl.hpp"

#include <zklock/detail/reply_kind.hpp>

#include <zklock/detail/limits.hpp>
#include <zklock/detail/lock_node.hpp>
#include <zklock/detail/path.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>

#include <future>

#include <fcntl.h>
#include <sys/stat.h>

namespace zklock {
namespace asio = boost::asio;

const char* to_string(session_state s) noexcept {
    switch (s) {
    case session_state::connecting: return "connecting";
    case session_state::connected: return "connected";
    case session_state::suspended: return "suspended";
    case session_state::closed: return "closed";
    }
    return "unknown";
}

const char* to_string(session_event e) noexcept {
    switch (e) {
    case session_event::connected: return "connected";
    case session_event::suspended: return "suspended";
    case session_event::reconnected: return "reconnected";
    case session_event::suspended_too_long: return "suspended_too_long";
    case session_event::expired: return "expired";
    case session_event::closed: return "closed";
    }
    return "unknown";
}

namespace detail {
namespace {

std::vector<std::string> to_vector(const String_vector* v) {
    std::vector<std::string> out;
    if (v) {
        out.reserve(static_cast<std::size_t>(v->count));
        for (int i = 0; i < v->count; ++i) out.emplace_back(v->data[i]);
    }
    return out;
}

} // namespace

c_acl::c_acl(acl_list acl) : entries_(std::move(acl)) {
    data_.reserve(entries_.size());
    for (auto& e : entries_)
        data_.push_back(ACL{static_cast<std::int32_t>(e.perms), Id{e.scheme.data(), e.id.data()}});
    vector_.count = static_cast<std::int32_t>(data_.size());
    vector_.data = data_.data();
}

session_impl::session_impl(asio::any_io_executor ex, SessionOptions options, std::shared_ptr<own_context> own)
    : options_(std::move(options)),
      acl_(std::make_shared<const c_acl>(options_.acl)),
      own_(std::move(own)),
      user_ex_(std::move(ex)),
      strand_(asio::make_strand(user_ex_)),
      desc_(strand_),
      timer_(strand_),
      suspend_timer_(strand_) {}

session_impl::~session_impl() {
    // Reached only when no handler refers to this any more: nothing runs
    // concurrently, so the handle can be closed from here.
    closing_ = true;
    if (desc_.is_open()) desc_.release();
    if (zh_) zookeeper_close(zh_);
}

bool session_impl::on_session_thread() const noexcept {
    if (own_) return own_->ioc.get_executor().running_in_this_thread();
    if (strand_.running_in_this_thread()) return true;
    if (auto* io = user_ex_.target<asio::io_context::executor_type>()) return io->running_in_this_thread();
    return false;
}

std::uint64_t session_impl::add_listener(listener l) {
    std::lock_guard lk(listeners_mutex_);
    const auto id = next_id_++;
    listeners_.emplace(id, std::make_shared<listener>(std::move(l)));
    return id;
}

void session_impl::remove_listener(std::uint64_t id) noexcept {
    std::lock_guard lk(listeners_mutex_);
    listeners_.erase(id);
}

void session_impl::notify(session_event e) {
    std::vector<std::shared_ptr<listener>> copy;
    {
        std::lock_guard lk(listeners_mutex_);
        for (auto& [id, l] : listeners_) copy.push_back(l);
    }
    const auto id = session_id_.load();
    for (auto& l : copy) (*l)(e, id);
}

// ---- handle lifecycle --------------------------------------------------------

void session_impl::start() {
    zoo_set_debug_level(static_cast<ZooLogLevel>(options_.client_log_level));
    open_handle();
}

void session_impl::open_handle() {
    state_ = session_state::connecting;
    const int timeout = static_cast<int>(options_.session_timeout.count());
    zh_ = zookeeper_init(options_.connect.c_str(), &session_impl::on_session_watch, timeout, nullptr, this, 0);
    if (!zh_) {
        state_ = session_state::closed;
        close_reason_ = make_error_code(errc::invalid_argument);
        auto waiters = std::move(connect_waiters_);
        connect_waiters_.clear();
        for (auto& [id, w] : waiters) w(close_reason_);
        notify(session_event::closed);
        return;
    }
    // By default the C client resolves the connect string again on every
    // zookeeper_interest() call: a getaddrinfo (sockets, files) per event-loop
    // turn. Resolve only when a connection is lost.
    zoo_set_servers_resolution_delay(zh_, -1);
    // Queued now, sent first on every connection of this handle (the C client
    // puts auth packets at the head of the send queue), so no request of ours
    // reaches the server before the session has its identities.
    // The first reply tells whether the server accepted them (see handle_state).
    awaiting_auth_ = false;
    auth_pending_ = 0;
    for (const auto& a : options_.auth) {
        if (zoo_add_auth(zh_, a.scheme.c_str(), a.credentials.data(), static_cast<int>(a.credentials.size()),
                         &session_impl::on_auth_reply, this) == ZOK)
            ++auth_pending_;
    }
    pump();
}

void session_impl::drop_handle() {
    ++fd_generation_;
    read_pending_ = write_pending_ = false;
    if (desc_.is_open()) {
        boost::system::error_code ignored;
        desc_.cancel(ignored);
        desc_.release();
    }
    fd_ = -1;
    socket_id_ = 0;
    timer_.cancel();
    timer_deadline_.reset();
    suspend_timer_.cancel();
    watches_.clear();  // a dead handle fires no watch again
    if (zh_) {
        zhandle_t* zh = zh_;
        closing_ = true;  // completions called from zookeeper_close must not submit
        zookeeper_close(zh);
        closing_ = false;
        zh_ = nullptr;
    }
}

void session_impl::close_on_strand() {
    if (state_ == session_state::closed && !zh_) return;
    // Holders first: the close makes the server delete our nodes and hand the
    // locks on, so nobody here may still hold one when that happens.
    state_ = session_state::closed;
    notify(session_event::closed);
    drop_handle();
    closing_ = true;  // for good: nothing is submitted any more
    auto waiters = std::move(connect_waiters_);
    connect_waiters_.clear();
    for (auto& [id, w] : waiters) w(close_reason_ ? close_reason_ : make_error_code(errc::session_closed));
    auto pending = std::move(janitor_);
    janitor_.clear();
    for (auto& e : pending) finish_janitor(e, make_error_code(errc::session_closed));
}

void session_impl::close_and_wait() noexcept {
    if (strand_.running_in_this_thread()) {
        close_on_strand();
        return;
    }
    try {
        if (own_ && !own_->ioc.stopped() && !on_session_thread()) {
            std::promise<void> done;
            auto f = done.get_future();
            post([this, &done] {
                close_on_strand();
                done.set_value();
            });
            f.wait();
            return;
        }
        post([this] { close_on_strand(); });
    } catch (...) {
        // Out of memory while posting: the handle is closed by the destructor.
    }
}

void session_impl::shutdown_own_thread() noexcept {
    if (own_) own_->stop_and_join();
}

void session_impl::on_session_watch(zhandle_t* zh, int type, int state, const char*, void*) {
    auto* self = static_cast<session_impl*>(const_cast<void*>(zoo_get_context(zh)));
    if (!self || self->closing_ || zh != self->zh_ || type != ZOO_SESSION_EVENT) return;
    self->handle_state(state);
}

void session_impl::handle_state(int zstate) {
    if (zstate == ZOO_CONNECTED_STATE) {
        // With auth, the session is usable once the server has accepted it: until
        // the first auth reply, a refused scheme would close the session right
        // after a "connected".
        if (auth_pending_ > 0) {
            awaiting_auth_ = true;
            return;
        }
        on_connected();
    } else if (zstate == ZOO_CONNECTING_STATE) {
        if (state_ != session_state::connected) return;
        state_ = session_state::suspended;
        notify(session_event::suspended);
        // The server expires the session a session timeout after it last heard from
        // us, which is about when we last heard from it; the client itself notices a
        // silent connection only after 2/3 of that. Count from the last receive.
        suspend_timer_.expires_at(last_receive_ + negotiated_timeout());
        suspend_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec && self->state_ == session_state::suspended) self->notify(session_event::suspended_too_long);
        });
    } else if (zstate == ZOO_EXPIRED_SESSION_STATE) {
        state_ = session_state::connecting;
        // The old handle is dead: every node it owned is gone, so are the deletes it still owed.
        auto pending = std::move(janitor_);
        janitor_.clear();
        for (auto& e : pending) finish_janitor(e, make_error_code(errc::session_expired));
        notify(session_event::expired);
        // Never close a handle from inside its own callback: do it from the strand.
        post([self = shared_from_this()] {
            if (self->closing_ || self->state_ == session_state::closed) return;
            self->drop_handle();
            self->open_handle();
        });
    } else if (zstate == ZOO_AUTH_FAILED_STATE) {
        // The server refused one of our authentications and closed the connection:
        // every later connection would be refused the same way. Close for good.
        post([self = shared_from_this()] {
            if (self->closing_ || self->state_ == session_state::closed) return;
            self->close_reason_ = make_error_code(errc::auth_failed);
            self->close_on_strand();
        });
    }
}

void session_impl::on_connected() {
    const clientid_t* cid = zoo_client_id(zh_);
    const std::int64_t id = cid ? cid->client_id : 0;
    const bool same = state_ == session_state::suspended && id == session_id_.load();
    negotiated_timeout_ms_ = zoo_recv_timeout(zh_);
    last_receive_ = asio::steady_timer::clock_type::now();
    session_id_ = id;
    state_ = session_state::connected;
    suspend_timer_.cancel();
    notify(same ? session_event::reconnected : session_event::connected);
    auto waiters = std::move(connect_waiters_);
    connect_waiters_.clear();
    for (auto& [wid, w] : waiters) w({});
    run_janitor();
}

void session_impl::on_auth_reply(int rc, const void* data) {
    // Runs inside zookeeper_process of the handle that sent the auth (a closed
    // handle calls back no more), on the strand.
    auto* self = static_cast<session_impl*>(const_cast<void*>(data));
    if (!self->zh_ || self->auth_pending_ == 0) return;
    if (rc != ZOK) return;  // the AUTH_FAILED session event closes the session
    if (--self->auth_pending_ > 0 || !self->awaiting_auth_) return;
    self->awaiting_auth_ = false;
    if (zoo_state(self->zh_) == ZOO_CONNECTED_STATE) self->on_connected();
}

// ---- driving the C client from Asio ------------------------------------------

void session_impl::pump() {
    if (!zh_ || in_process_ || closing_) return;
    int fd = -1;
    int interest = 0;
    timeval tv{};
    const int rc = zookeeper_interest(zh_, &fd, &interest, &tv);
    if (rc != ZOK && rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT) {
        // ZINVALIDSTATE: the handle is dead; the session watcher handles it.
        if (rc == ZINVALIDSTATE && state_ != session_state::closed && !closing_) {
            const int zstate = zoo_state(zh_);
            if (zstate == ZOO_EXPIRED_SESSION_STATE || zstate == ZOO_AUTH_FAILED_STATE) return;
        }
    }
    // The C client closes its socket on connection loss and opens a new one,
    // which may get the same number: compare the socket itself, not the number,
    // or epoll would keep waiting on the closed one.
    std::uint64_t socket_id = 0;
    if (fd >= 0) {
        struct stat st {};
        if (::fstat(fd, &st) == 0) socket_id = static_cast<std::uint64_t>(st.st_ino);
        else fd = -1;  // already closed: only the timer drives the client until it reconnects
    }
    if (fd != fd_ || socket_id != socket_id_) {
        socket_id_ = socket_id;
        ++fd_generation_;
        read_pending_ = write_pending_ = false;
        if (desc_.is_open()) {
            boost::system::error_code ignored;
            desc_.cancel(ignored);
            desc_.release();  // the C client owns and closes its socket
        }
        fd_ = fd;
        if (fd_ >= 0) {
            // Debian's C client opens its socket without SOCK_CLOEXEC: a child the
            // process execs must not inherit the session's connection.
            if (const int flags = ::fcntl(fd_, F_GETFD); flags >= 0 && !(flags & FD_CLOEXEC))
                ::fcntl(fd_, F_SETFD, flags | FD_CLOEXEC);
            boost::system::error_code ec;
            desc_.assign(fd_, ec);
            if (ec) fd_ = -1;
        }
    }
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
            desc_.async_wait(asio::posix::descriptor_base::wait_write,
                             [self = shared_from_this(), gen](boost::system::error_code ec) {
                                 if (gen != self->fd_generation_) return;
                                 self->write_pending_ = false;
                                 if (!ec) self->process(ZOOKEEPER_WRITE);
                             });
        }
    }
    const auto deadline = asio::steady_timer::clock_type::now() + std::chrono::seconds(tv.tv_sec) +
                          std::chrono::microseconds(tv.tv_usec);
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
    if (events & ZOOKEEPER_READ) last_receive_ = asio::steady_timer::clock_type::now();
    in_process_ = true;
    zookeeper_process(zh_, events);
    in_process_ = false;
    pump();
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

// ---- requests ------------------------------------------------------------------

void session_impl::create(const std::string& path, const std::string& data, int flags, const c_acl& acl,
                          string_stat_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_acreate2(
            zh_, path.c_str(), data.data(), static_cast<int>(data.size()), acl.get(), flags,
            [](int rc, const char* value, const Stat* stat, const void* d) {
                auto r = request<string_stat_fn>::take(d);
                r->fn(rc, rc == ZOK && value ? std::string(value) : std::string(), node_stat::from(stat));
            },
            ctx);
    });
}

void session_impl::get_children(const std::string& path, children_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_aget_children(zh_, path.c_str(), 0, &session_impl::on_children, ctx);
    });
}

void session_impl::on_children(int rc, const String_vector* strings, const void* data) {
    auto r = request<children_fn>::take(data);
    r->fn(rc, rc == ZOK ? to_vector(strings) : std::vector<std::string>{});
}

std::uint64_t session_impl::register_watch(watch_fn fn) {
    const auto id = next_id_++;
    watches_.emplace(id, std::move(fn));
    return id;
}

void session_impl::on_node_watch(zhandle_t* zh, int type, int, const char*, void* ctx) {
    // Session events reach every registered watcher in the C client; the session
    // watcher handles them. A node event fires a watch once.
    if (type == ZOO_SESSION_EVENT) return;
    auto* self = static_cast<session_impl*>(const_cast<void*>(zoo_get_context(zh)));
    if (!self || self->closing_ || zh != self->zh_) return;
    const auto it = self->watches_.find(reinterpret_cast<std::uintptr_t>(ctx));
    if (it == self->watches_.end()) return;
    auto fn = std::move(it->second);
    self->watches_.erase(it);
    fn(type);
}

void session_impl::get_children_watch(const std::string& path, watch_fn on_watch, children_fn fn) {
    const auto wid = register_watch(std::move(on_watch));
    // A listing that fails sets no watch: forget its registration.
    fn = [this, wid, fn = std::move(fn)](int rc, std::vector<std::string> children) {
        if (rc != ZOK) watches_.erase(wid);
        fn(rc, std::move(children));
    };
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_awget_children(zh_, path.c_str(), &session_impl::on_node_watch,
                                  reinterpret_cast<void*>(static_cast<std::uintptr_t>(wid)), &session_impl::on_children,
                                  ctx);
    });
}

void session_impl::get_data(const std::string& path, watch_fn on_watch, data_fn fn) {
    std::uint64_t wid = 0;
    if (on_watch) {
        wid = register_watch(std::move(on_watch));
        // A getData that fails sets no watch: forget its registration.
        fn = [this, wid, fn = std::move(fn)](int rc, std::string data, const node_stat& st) {
            if (rc != ZOK) watches_.erase(wid);
            fn(rc, std::move(data), st);
        };
    }
    submit(std::move(fn), [&](const void* ctx) {
        auto completion = [](int rc, const char* value, int len, const Stat* stat, const void* d) {
            auto r = request<data_fn>::take(d);
            std::string data;
            if (rc == ZOK && value && len > 0) data.assign(value, static_cast<std::size_t>(len));
            r->fn(rc, std::move(data), node_stat::from(stat));
        };
        return wid ? zoo_awget(zh_, path.c_str(), &session_impl::on_node_watch,
                               reinterpret_cast<void*>(static_cast<std::uintptr_t>(wid)), completion, ctx)
                   : zoo_aget(zh_, path.c_str(), 0, completion, ctx);
    });
}

void session_impl::on_void(int rc, const void* data) {
    auto r = request<void_fn>::take(data);
    r->fn(rc);
}

void session_impl::remove(const std::string& path, int version, void_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_adelete(zh_, path.c_str(), version, &session_impl::on_void, ctx);
    });
}

void session_impl::set_data(const std::string& path, const std::string& data, int version, void_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_aset(
            zh_, path.c_str(), data.data(), static_cast<int>(data.size()), version,
            [](int rc, const Stat*, const void* d) { request<void_fn>::take(d)->fn(rc); }, ctx);
    });
}

void session_impl::exists(const std::string& path, watch_fn on_watch, stat_fn fn) {
    std::uint64_t wid = 0;
    if (on_watch) {
        wid = register_watch(std::move(on_watch));
        // exists leaves a watch when it succeeds and when the node is absent.
        fn = [this, wid, fn = std::move(fn)](int rc, const node_stat& st) {
            if (rc != ZOK && rc != ZNONODE) watches_.erase(wid);
            fn(rc, st);
        };
    }
    submit(std::move(fn), [&](const void* ctx) {
        auto completion = [](int rc, const Stat* stat, const void* d) {
            request<stat_fn>::take(d)->fn(rc, node_stat::from(stat));
        };
        return wid ? zoo_awexists(zh_, path.c_str(), &session_impl::on_node_watch,
                                  reinterpret_cast<void*>(static_cast<std::uintptr_t>(wid)), completion, ctx)
                   : zoo_aexists(zh_, path.c_str(), 0, completion, ctx);
    });
}

void session_impl::ensure_parents(const std::string& path, const std::string& data, const c_acl& acl,
                                  std::function<void(int rc, const std::string& failed_path)> fn) {
    // All creates are pipelined; the session runs them in order, so each
    // ancestor exists before its child is created. NODEEXISTS is success.
    auto ancestors = detail::ancestors(path);
    ancestors.push_back(path);
    const std::string empty;
    struct state {
        std::size_t remaining;
        int first_error = ZOK;
        std::string failed_path;
        std::function<void(int, const std::string&)> fn;
    };
    auto st = std::make_shared<state>(state{ancestors.size(), ZOK, {}, std::move(fn)});
    for (const auto& p : ancestors) {
        create(p, p == path ? data : empty, ZOO_CONTAINER, acl, [st, p](int rc, std::string, const node_stat&) {
            if (rc != ZOK && rc != ZNODEEXISTS && st->first_error == ZOK) {
                st->first_error = rc;
                st->failed_path = p;
            }
            if (--st->remaining == 0) st->fn(st->first_error, st->failed_path);
        });
    }
}

void session_impl::set_acl(const std::string& path, int version, const c_acl& acl, void_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_aset_acl(zh_, path.c_str(), version, const_cast<ACL_vector*>(acl.get()), &session_impl::on_void,
                            ctx);
    });
}

void session_impl::get_acl(const std::string& path, acl_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_aget_acl(
            zh_, path.c_str(),
            [](int rc, ACL_vector* acl, Stat*, const void* d) {
                auto r = request<acl_fn>::take(d);
                acl_list out;
                if (rc == ZOK && acl) {
                    for (int i = 0; i < acl->count; ++i)
                        out.push_back({acl->data[i].id.scheme ? acl->data[i].id.scheme : "",
                                       acl->data[i].id.id ? acl->data[i].id.id : "",
                                       static_cast<std::uint32_t>(acl->data[i].perms)});
                }
                r->fn(rc, std::move(out));
            },
            ctx);
    });
}

// ---- deletes the library owns ----------------------------------------------------

void session_impl::delete_owned(std::string path, std::int64_t owner, std::function<void(std::error_code)> fn) {
    auto e = std::make_shared<janitor_entry>(janitor_entry{std::move(path), {}, owner, std::move(fn), false});
    janitor_.push_back(e);
    if (connected()) janitor_step(e);
}

void session_impl::delete_owned_by_guid(std::string dir, std::string guid, std::int64_t owner,
                                        std::function<void(std::error_code)> fn) {
    auto e = std::make_shared<janitor_entry>(janitor_entry{std::move(dir), std::move(guid), owner, std::move(fn), false});
    janitor_.push_back(e);
    if (connected()) janitor_step(e);
}

void session_impl::run_janitor() {
    const auto entries = janitor_;
    for (const auto& e : entries) janitor_step(e);
}

void session_impl::finish_janitor(const std::shared_ptr<janitor_entry>& e, std::error_code ec) {
    const auto it = std::find(janitor_.begin(), janitor_.end(), e);
    if (it != janitor_.end()) janitor_.erase(it);
    if (e->done) {
        auto done = std::move(e->done);
        e->done = nullptr;
        done(ec);
    }
}

void session_impl::janitor_step(std::shared_ptr<janitor_entry> e) {
    if (e->in_flight || !connected()) return;
    if (e->owner != session_id_.load()) {
        // The session that owned the node is gone, and the node with it.
        finish_janitor(e, make_error_code(errc::session_expired));
        return;
    }
    e->in_flight = true;
    auto on_delete = [this, e](int rc) {
        e->in_flight = false;
        if (rc == ZNONODE) return finish_janitor(e, {});
        switch (detail::classify_reply(rc)) {
        case detail::reply_kind::ok: return finish_janitor(e, {});
        case detail::reply_kind::session_gone: return finish_janitor(e, make_error_code(errc::session_expired));
        case detail::reply_kind::closed: return finish_janitor(e, make_error_code(errc::session_closed));
        case detail::reply_kind::retry:
            if (connected()) janitor_step(e);  // otherwise: retried on reconnect
            return;
        case detail::reply_kind::answer: return finish_janitor(e, from_zookeeper(rc));
        }
    };
    if (e->guid.empty()) {
        remove(e->path, -1, on_delete);
        return;
    }
    get_children(e->path, [this, e, on_delete](int rc, std::vector<std::string> children) {
        if (rc == ZNONODE) return on_delete(ZNONODE);
        if (rc != ZOK) return on_delete(rc);
        const auto name = detail::find_by_guid(children, e->guid);
        if (!name) return on_delete(ZNONODE);
        remove(e->path + "/" + *name, -1, on_delete);
    });
}

std::string session_impl::describe() const {
    const auto now = asio::steady_timer::clock_type::now();
    const auto ms = [](auto d) { return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()); };
    std::string out = std::string("state=") + to_string(state_.load());
    out += " zoo_state=" + (zh_ ? std::to_string(zoo_state(zh_)) : std::string("no-handle"));
    out += " id=" + std::to_string(session_id_.load()) + " fd=" + std::to_string(fd_);
    out += std::string(" read_wait=") + (read_pending_ ? "yes" : "no") + " write_wait=" + (write_pending_ ? "yes" : "no");
    out += " timer_in_ms=" + (timer_deadline_ ? ms(*timer_deadline_ - now) : std::string("none"));
    out += " last_receive_ms_ago=" + ms(now - last_receive_);
    std::size_t in_flight = 0;
    for (const auto& e : janitor_) in_flight += e->in_flight ? 1 : 0;
    out += " owed_deletes=" + std::to_string(janitor_.size()) + " (in flight " + std::to_string(in_flight) + ")";
    out += " connect_waiters=" + std::to_string(connect_waiters_.size()) + " watches=" + std::to_string(watches_.size());
    if (closing_) out += " closing";
    return out;
}

} // namespace detail

// ---- Session ---------------------------------------------------------------------

Subscription::~Subscription() { reset(); }

void Subscription::reset() noexcept {
    if (auto impl = impl_.lock()) impl->remove_listener(id_);
    impl_.reset();
    id_ = 0;
}

namespace {
SessionOptions checked(SessionOptions options) {
    if (const auto check = detail::validate_session_options(options); !check)
        throw error(check.error, "zklock::Session: " + check.reason);
    return options;
}
} // namespace

Session::Session(SessionOptions options) {
    options = checked(std::move(options));
    auto own = detail::own_context::start();
    auto ex = asio::any_io_executor(own->ioc.get_executor());
    impl_ = std::make_shared<detail::session_impl>(ex, std::move(options), std::move(own));
    impl_->post([impl = impl_.get()] { impl->start(); });
}

Session::Session(executor_type executor, SessionOptions options)
    : impl_(std::make_shared<detail::session_impl>(std::move(executor), checked(std::move(options)), nullptr)) {
    impl_->post([impl = impl_.get()] { impl->start(); });
}

Session::~Session() {
    impl_->close_and_wait();
    impl_->shutdown_own_thread();
}

void Session::close() noexcept { impl_->close_and_wait(); }

session_state Session::state() const noexcept { return impl_->state(); }
std::int64_t Session::session_id() const noexcept { return impl_->session_id(); }
std::chrono::milliseconds Session::negotiated_timeout() const noexcept { return impl_->negotiated_timeout(); }
const SessionOptions& Session::options() const noexcept { return impl_->options(); }
std::string Session::identity() const { return zklock::identity(impl_->options().auth); }
Session::executor_type Session::get_executor() const noexcept { return impl_->user_executor(); }

Subscription Session::subscribe(std::function<void(session_event, std::int64_t)> callback) {
    Subscription s;
    s.impl_ = impl_;
    s.id_ = impl_->add_listener(std::move(callback));
    return s;
}

void Session::async_connect_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    struct op {
        asio::any_completion_handler<void(std::error_code)> handler;
        asio::steady_timer timer;
        std::uint64_t waiter = 0;
        bool done = false;
    };
    auto impl = impl_;
    auto o = std::make_shared<op>(op{std::move(handler), asio::steady_timer(impl->strand()), 0, false});
    auto finish = [impl, o](std::error_code ec) {
        if (o->done) return;
        o->done = true;
        o->timer.cancel();
        if (o->waiter) impl->cancel_connect_waiter(o->waiter);
        detail::post_completion(std::move(o->handler), impl->user_executor(), ec);
    };
    auto slot = asio::get_associated_cancellation_slot(o->handler);
    if (slot.is_connected()) {
        slot.assign([impl, finish](asio::cancellation_type) {
            impl->post([finish] { finish(detail::operation_aborted()); });
        });
    }
    impl->post([impl, o, finish] {
        o->timer.expires_after(impl->options().connect_timeout);
        o->timer.async_wait([impl, finish](boost::system::error_code ec) {
            if (!ec) finish(make_error_code(errc::timeout));
        });
        o->waiter = impl->when_connected(finish);
    });
}

void Session::connect(std::error_code& ec) {
    if (impl_->on_session_thread()) {
        ec = make_error_code(errc::would_deadlock);
        return;
    }
    std::promise<std::error_code> p;
    auto f = p.get_future();
    async_connect_impl([&p](std::error_code e) { p.set_value(e); });
    ec = f.get();
}

void Session::connect() {
    std::error_code ec;
    connect(ec);
    if (ec == errc::timeout)
        throw error(ec, "could not connect to " + impl_->options().connect + " within " +
                            std::to_string(impl_->options().connect_timeout.count()) + " ms");
    if (ec == errc::invalid_argument) throw error(ec, "zklock::Session: invalid connect string '" + impl_->options().connect + "'");
    throw_if(ec, "zklock::Session::connect");
}

} // namespace zklock
