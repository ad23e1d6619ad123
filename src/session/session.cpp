// The life of a Session's ZooKeeper handle: opening, the session events,
// expiry (a new handle), closing. The rest of session_impl: session_io.cpp
// (the C client driven by Asio), session_requests.cpp (the requests),
// session_janitor.cpp (the deletes the session owns); the public Session is
// session_api.cpp.
#include "session/session_impl.hpp"

#include "fsm/safe_time.hpp"

#include "support/io_seam.hpp"
#include "support/log_emit.hpp"

#include "fsm/client_log.hpp"
#include "fsm/limits.hpp"
#include "fsm/session_states.hpp"

#ifndef ZKLOCK_SIMULATION
#include "session/tls_leg.hpp"
#endif

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>

#include <zookeeper_log.h>

#include <cstdio>
#include <future>
#include <set>
#include <string>
#include <string_view>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

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

/// "<hostname>:<pid>": what a node stores when the user gives no data.
std::string default_node_data() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    return std::string(host) + ":" + std::to_string(::getpid());
}

} // namespace

session_impl::session_impl(asio::any_io_executor ex, SessionOptions options, std::shared_ptr<own_context> own)
    : options_(std::move(options)),
      acl_(std::make_shared<const c_acl>(options_.acl)),
      words_(make_policy_words(acl_->entries(), options_.auth, options_.connect)),
      default_node_data_(std::make_shared<const std::string>(default_node_data())),
      own_(std::move(own)),
      user_ex_(std::move(ex)),
      strand_(asio::make_strand(user_ex_)),
      desc_(strand_),
      timer_(strand_),
      suspend_timer_(strand_),
      probe_timer_(strand_),
      settle_timer_(strand_) {
    client_connect_ = options_.connect;
#ifndef ZKLOCK_SIMULATION
    if (options_.tls.enabled()) {
        // The C client has no TLS: it talks to a loopback leg per server,
        // which forwards over TLS (tls_leg.hpp). Its hooks run on the strand.
        tls_legs::hooks h;
        h.tls_failed = [this](std::size_t leg, std::error_code code, const std::string& detail) {
            note_tls_failure(leg, code, detail);
        };
        h.refused = [this](const std::string& loopback) { note_refused(loopback); };
        legs_ = std::make_shared<tls_legs>(strand_, options_.tls, options_.connect, std::move(h));
        client_connect_ = legs_->client_connect();
    }
#endif
}

std::shared_ptr<const policy_words> session_impl::words_for(const std::shared_ptr<const c_acl>& acl) const {
    if (!acl || acl == acl_) return words_;
    return make_policy_words(acl->entries(), options_.auth, options_.connect);
}

session_impl::~session_impl() {
    // Reached only when no handler refers to this any more: nothing runs
    // concurrently, so the handle can be closed from here.
    closing_ = true;
    if (desc_.is_open()) drop_descriptor(desc_);
    const log_scope scope(this);
    if (zh_) zookeeper_close(zh_);
#ifndef ZKLOCK_SIMULATION
    if (legs_) legs_->close();
#endif
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
    listeners_.emplace(id, std::move(l));
    return id;
}

void session_impl::remove_listener(std::uint64_t id) noexcept {
    std::lock_guard lk(listeners_mutex_);
    listeners_.erase(id);
}

void session_impl::subscribe(session_subscriber& s) {
    std::lock_guard lk(listeners_mutex_);
    subscribers_.push_back(s);
}

void session_impl::unsubscribe(session_subscriber& s) noexcept {
    std::lock_guard lk(listeners_mutex_);
    if (s.is_linked()) subscribers_.erase(subscribers_.iterator_to(s));
}

namespace {

std::string hex_id(std::int64_t id) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(id));
    return buf;
}

/// A C-client line on stderr, as the C client prints it without a callback
/// (the callback gets it without the newline).
void print_client_line(const char* line) {
    if (!line) return;
    const std::string_view text(line);
    std::fprintf(stderr, text.ends_with('\n') ? "%s" : "%s\n", line);
}

} // namespace

thread_local session_impl* session_impl::log_scope::current_ = nullptr;

void session_impl::on_client_log(const char* line) {
    auto* self = log_scope::current();
    const auto parsed = parse_client_log(line ? line : "");
    if (!self || !parsed) return;  // not a line of a call of ours (none is expected): dropped, as by default
    // The one place the C client says a connect was refused (nothing listens):
    // connect() need not wait out its deadline when every address refuses.
    if (auto refused = refused_address(parsed->message)) self->note_refused(std::move(*refused));
    if (self->options_.log.callback) {
        return emit(self->options_.log, parsed->level, "zookeeper", parsed->message, self->session_id_.load());
    }
    if (static_cast<int>(parsed->level) <= self->options_.client_log_level) print_client_line(line);
}

void session_impl::log(log_level level, std::string_view message) const {
    emit(options_.log, level, "zklock", message, session_id_.load());
}

void session_impl::notify(session_event e) {
    const auto sid = hex_id(session_id_.load());
    switch (e) {
    case session_event::connected:
        log(log_level::info, "session " + sid + " established (timeout " + std::to_string(negotiated_timeout_ms_) + " ms)");
        break;
    case session_event::suspended: log(log_level::warn, "connection lost; session " + sid + " suspended, reconnecting"); break;
    case session_event::reconnected: log(log_level::info, "reconnected; session " + sid + " kept"); break;
    case session_event::suspended_too_long:
        log(log_level::warn, "session " + sid + " suspended for longer than its timeout: the server may have expired it" +
                                 (options_.lose_locks_on_suspension ? "; its locks are reported lost" : ""));
        break;
    case session_event::expired: log(log_level::error, "session " + sid + " expired; opening a new one"); break;
    case session_event::closed:
        log(log_level::info, "session " + sid + " closed" + (close_reason_ ? ": " + close_reason_.message() : ""));
        break;
    }
    // Called outside the lock, so that a listener may add or remove listeners
    // (a lock it drops removes its own); copied only here. A subscriber being
    // destroyed is skipped: it waits on the lock to unlink itself, so it is
    // still there to ask.
    std::vector<listener> copy;
    std::vector<std::shared_ptr<session_subscriber>> subscribers;
    {
        std::lock_guard lk(listeners_mutex_);
        copy.reserve(listeners_.size());
        for (auto& [id, l] : listeners_) copy.push_back(l);
        for (auto& s : subscribers_)
            if (auto alive = s.keep_alive()) subscribers.push_back(std::move(alive));
    }
    const auto id = session_id_.load();
    for (auto& l : copy) l(e, id);
    for (auto& s : subscribers) s->on_session_event(e);
}

// ---- handle lifecycle --------------------------------------------------------

void session_impl::start() {
    // The C client's process-wide level is the program's to set
    // (set_zookeeper_client_log_level): a Session never changes it.
#ifndef ZKLOCK_SIMULATION
    if (legs_) legs_->start();
#endif
    open_handle();
}

namespace {

// How many addresses the connect string's hosts resolve to (any family, TCP,
// none filtered: never fewer than the C client tries); 0 when one of them does
// not resolve (nothing is then said to have refused them all).
std::size_t resolved_addresses(std::string_view connect) {
    std::set<std::string> addresses;
    std::string_view hosts = connect.substr(0, connect.find('/'));
    while (!hosts.empty()) {
        const auto comma = hosts.find(',');
        auto item = hosts.substr(0, comma);
        hosts = comma == std::string_view::npos ? std::string_view() : hosts.substr(comma + 1);
        const auto colon = item.rfind(':');
        if (colon == std::string_view::npos) return 0;
        auto host = item.substr(0, colon);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
        const std::string host_text(host), port_text(item.substr(colon + 1));
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        if (::getaddrinfo(host_text.c_str(), port_text.c_str(), &hints, &found) != 0) return 0;
        for (const auto* a = found; a; a = a->ai_next) {
            char name[NI_MAXHOST] = {};
            if (::getnameinfo(a->ai_addr, a->ai_addrlen, name, sizeof name, nullptr, 0, NI_NUMERICHOST) == 0)
                addresses.insert(std::string(name) + "/" + port_text);
        }
        ::freeaddrinfo(found);
    }
    return addresses.size();
}

} // namespace

void session_impl::open_handle() {
    state_ = session_state::connecting;
    addresses_ = resolved_addresses(client_connect_);
    tls_failed_.clear();
    refused_.clear();
    all_refused_ = false;
    refusal_backoff_ = std::chrono::milliseconds(0);
    const int timeout = static_cast<int>(options_.session_timeout.count());
    const log_scope scope(this);
    zh_ = zookeeper_init2(client_connect_.c_str(), &session_impl::on_session_watch, timeout, nullptr, this, 0,
                          &session_impl::on_client_log);
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
    write_waited_ = false;
    if (desc_.is_open()) drop_descriptor(desc_);
    fd_ = -1;
    socket_id_ = 0;
    socket_steady_ = false;
    timer_.cancel();
    timer_deadline_.reset();
    suspend_timer_.cancel();
    probe_timer_.cancel();
    watches_.clear();  // a dead handle fires no watch again
    if (zh_) {
        zhandle_t* zh = zh_;
        closing_ = true;  // completions called from zookeeper_close must not submit
        const log_scope scope(this);
        zookeeper_close(zh);
        closing_ = false;
        zh_ = nullptr;
        awaiting_ = 0;  // every request of the handle was answered ZCLOSING
    }
}

void session_impl::close_on_strand() {
    if (state_ == session_state::closed && !zh_) return;
    // Holders first: the close makes the server delete our nodes and hand the
    // locks on, so nobody here may still hold one when that happens.
    state_ = session_state::closed;
    notify(session_event::closed);
#ifndef ZKLOCK_SIMULATION
    if (legs_ && zh_ && zoo_state(zh_) == ZOO_CONNECTED_STATE) legs_->close_sessions();
#endif
    drop_handle();
    closing_ = true;  // for good: nothing is submitted any more
#ifndef ZKLOCK_SIMULATION
    if (legs_) legs_->close();
#endif
    auto waiters = std::move(connect_waiters_);
    connect_waiters_.clear();
    for (auto& [id, w] : waiters) w(close_reason_ ? close_reason_ : make_error_code(errc::session_closed));
    auto pending = std::move(janitor_);
    janitor_.clear();
    for (auto& e : pending) finish_janitor(e, make_error_code(errc::session_closed));
    settle_timer_.cancel();
    settling_.clear();
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
    switch (on_client_state(state_, zstate, auth_pending_ > 0)) {
    case client_state_step::nothing: return;
    case client_state_step::await_auth: awaiting_auth_ = true; return;
    case client_state_step::connect: return on_connected();
    case client_state_step::suspend:
        state_ = session_state::suspended;
        notify(session_event::suspended);
        // The server expires the session a session timeout after it last heard from
        // us, which is about when we last heard from it; the client itself notices a
        // silent connection only after 2/3 of that. Count from the last receive.
        suspend_timer_.expires_at(last_receive_ + negotiated_timeout());
        suspend_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec && self->state_ == session_state::suspended) self->notify(session_event::suspended_too_long);
        });
        return;
    case client_state_step::expire: {
        state_ = session_state::connecting;
        ++generation_;  // what is heard from now on is of the next session
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
        return;
    }
    case client_state_step::close_auth_failed:
        // Close for good, from the strand.
        post([self = shared_from_this()] {
            if (self->closing_ || self->state_ == session_state::closed) return;
            self->close_reason_ = make_error_code(errc::auth_failed);
            self->close_on_strand();
        });
        return;
    }
}

void session_impl::on_connected() {
    const clientid_t* cid = zoo_client_id(zh_);
    const std::int64_t id = cid ? cid->client_id : 0;
    const auto event = connected_event(state_, session_id_.load(), id);
    negotiated_timeout_ms_ = zoo_recv_timeout(zh_);
    last_receive_ = clock::now();
    session_id_ = id;
    state_ = session_state::connected;
    refused_.clear();
    tls_failed_.clear();
    all_refused_ = false;
    refusal_backoff_ = std::chrono::milliseconds(0);
    suspend_timer_.cancel();
    notify(event);
    auto waiters = std::move(connect_waiters_);
    connect_waiters_.clear();
    for (auto& [wid, w] : waiters) w({});
    run_janitor();
    // A session kept across a connection loss was last heard before the loss,
    // up to most of a timeout ago, and a hold's budget ends a timeout after
    // that: the probe's first sync, a third of a timeout from now, could come
    // after it. One sync now renews the budget's basis.
    if (event == session_event::reconnected) sync("/", [](int) {});  // the answer is noted on its way
    arm_probe();
}

void session_impl::arm_probe() {
    const auto third = negotiated_timeout() / 3;
    if (third.count() <= 0) return;
    probe_timer_.expires_after(third);
    probe_timer_.async_wait([self = shared_from_this(), third](boost::system::error_code ec) {
        if (ec || self->closing_ || !self->zh_ || !self->connected()) return;
        bool stale = false;
        {
            std::lock_guard lk(self->heard_m_);
            stale = clock::now() - self->heard_ >= third;
        }
        if (stale) self->sync("/", [](int) {});  // the answer is noted on its way
        self->arm_probe();
    });
}

void note_answer_in_scope(std::chrono::steady_clock::time_point sent, int rc) noexcept {
    if (auto* s = session_impl::log_scope::current()) s->note_answer(sent, rc);
}

void note_taken_in_scope() noexcept {
    if (auto* s = session_impl::log_scope::current(); s && s->awaiting_ > 0) --s->awaiting_;
}

void session_impl::note_answer(std::chrono::steady_clock::time_point sent, int rc) noexcept {
    if (!server_answered(rc)) return;
    const auto gen = generation_.load();
    std::lock_guard lk(heard_m_);
    if (heard_generation_ != gen) {
        heard_generation_ = gen;
        heard_ = sent;
    } else if (sent > heard_) {
        heard_ = sent;
    }
}

std::chrono::steady_clock::time_point session_impl::safe_until(std::uint64_t generation) const {
    // A session known to be gone (expired: the generation moved on) is safe
    // for no time, before anything of the next one has been heard.
    if (generation != generation_.load()) return {};
    std::lock_guard lk(heard_m_);
    if (generation != heard_generation_) return {};
    return detail::safe_until(heard_, negotiated_timeout());
}

void session_impl::note_tls_failure(std::size_t leg, std::error_code code, const std::string& detail) {
#ifndef ZKLOCK_SIMULATION
    if (closing_ || state_ == session_state::closed || connected() || !legs_) return;
    log(log_level::error, "TLS to " + legs_->server_text(leg) + " failed: " + code.message() + " (" + detail + ")");
    // A session that has connected once keeps trying: a server restarting
    // (its secure port open before it serves) or a certificate replaced
    // fails a handshake for a while, and the loss of a hold is told as
    // without TLS. Only a first connect gives up.
    if (session_id_.load() != 0) return;
    tls_failed_.insert(leg);
    if (tls_failed_.size() < legs_->size()) return;
    // Every server failed: another round would fail the same way, for ever.
    post([self = shared_from_this(), code] {
        if (self->closing_ || self->state_ == session_state::closed) return;
        self->close_reason_ = code;
        self->close_on_strand();
    });
#else
    (void)leg, (void)code, (void)detail;
#endif
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


std::string session_impl::describe() const {
    const auto now = clock::now();
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

} // namespace zklock
