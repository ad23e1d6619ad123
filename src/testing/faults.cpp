// The faults a test injects into a Session, over the core's seam
// (zklock/detail/session_seam.hpp): the strand is held by a handler posted
// through it, and the requests another client would send go through it too.
#include <zklock/testing/faults.hpp>

#include <zklock/detail/session_seam.hpp>
#include <zklock/error.hpp>

#include <zookeeper.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <poll.h>
#include <utility>

namespace zklock::testing {

namespace {

// Attaches a second handle to the session `id` / `password` and closes it,
// which ends the session on the server.
void take_over_and_close(const Session& session, const clientid_t& id, std::chrono::milliseconds timeout) {
    struct state {
        bool connected = false;
    } st;
    auto watcher = [](zhandle_t*, int type, int zstate, const char*, void* ctx) {
        if (type == ZOO_SESSION_EVENT && zstate == ZOO_CONNECTED_STATE) static_cast<state*>(ctx)->connected = true;
    };
    // Its own log callback, which drops every line: the fault is the test's to
    // report, and the C client's process-wide level may be anything.
    zhandle_t* zh = zookeeper_init2(session.options().connect.c_str(), watcher,
                                    static_cast<int>(session.negotiated_timeout().count()), &id, &st, 0,
                                    [](const char*) {});
    if (!zh) throw error(make_error_code(errc::invalid_argument), "expire_session: zookeeper_init failed");
    // Drive the second single-threaded handle until it is connected.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!st.connected && std::chrono::steady_clock::now() < deadline) {
        int fd = -1, interest = 0;
        timeval tv{};
        zookeeper_interest(zh, &fd, &interest, &tv);
        pollfd pfd{fd, 0, 0};
        if (interest & ZOOKEEPER_READ) pfd.events |= POLLIN;
        if (interest & ZOOKEEPER_WRITE) pfd.events |= POLLOUT;
        const int ms = static_cast<int>(std::min<long>(tv.tv_sec * 1000 + tv.tv_usec / 1000, 50));
        ::poll(&pfd, fd >= 0 ? 1 : 0, ms);
        int events = 0;
        if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) events |= ZOOKEEPER_READ;
        if (pfd.revents & POLLOUT) events |= ZOOKEEPER_WRITE;
        zookeeper_process(zh, events);
    }
    const bool ok = st.connected;
    zookeeper_close(zh);  // closing the session on the server expires it for the original handle
    if (!ok) throw error(make_error_code(errc::timeout), "expire_session: could not attach to the session");
}

} // namespace

SessionFreeze::SessionFreeze(Session& session, std::chrono::milliseconds timeout) : session_(session) {
    if (session.state() == session_state::closed)
        throw error(make_error_code(errc::session_closed), "SessionFreeze: the session is closed");
    // Hold the session's strand: a handler that waits until thawed.
    auto held = std::make_shared<std::promise<std::optional<seam::session_identity>>>();
    auto f = held->get_future();
    release_ = std::make_shared<std::promise<void>>();
    seam::run_on_strand(session, [held, released = release_->get_future().share()](const seam::strand_turn& turn) {
        held->set_value(turn.identity);
        // Run inline on the caller's thread (the session's thread has ended):
        // nothing to hold.
        if (turn.on_session_thread) released.wait();
    });
    if (f.wait_for(timeout) != std::future_status::ready) {
        thaw();
        throw error(make_error_code(errc::timeout), "SessionFreeze: the session's strand was not free in time");
    }
    if (const auto id = f.get()) {
        client_id_ = id->client_id;
        password_ = id->password;
    }
}

SessionFreeze::~SessionFreeze() { thaw(); }

void SessionFreeze::thaw() noexcept {
    if (auto r = std::exchange(release_, nullptr)) r->set_value();
}

void SessionFreeze::expire(std::chrono::milliseconds timeout) {
    if (!client_id_) throw error(make_error_code(errc::invalid_state), "expire_session: the session is not connected");
    clientid_t id{};
    id.client_id = *client_id_;
    std::memcpy(id.passwd, password_.data(), std::min(password_.size(), sizeof id.passwd));
    take_over_and_close(session_, id, timeout);
}

void expire_session(Session& session, std::chrono::milliseconds timeout) {
    // Hold the session's strand while another connection takes the session over and
    // closes it: otherwise the client reconnects at once, takes the session back, and
    // the server refuses the close (session moved).
    SessionFreeze freeze(session, timeout);
    freeze.expire(timeout);
}

namespace {

// Waits for the answer a seam request gives its completion.
template <class T>
struct answer {
    std::shared_ptr<std::promise<std::pair<std::error_code, T>>> promise =
        std::make_shared<std::promise<std::pair<std::error_code, T>>>();
    std::pair<std::error_code, T> get() { return promise->get_future().get(); }
};

} // namespace

void delete_node(Session& session, const std::string& path) {
    answer<int> a;
    seam::remove_node(session, path, [p = a.promise](std::error_code ec) { p->set_value({ec, 0}); });
    throw_if(a.get().first, "zklock::testing::delete_node " + path);
}

void create_node(Session& session, const std::string& path, const std::string& data, bool ephemeral) {
    answer<std::string> a;
    seam::create_node(session, path, data, ephemeral, false,
                      [p = a.promise](std::error_code ec, std::string made) { p->set_value({ec, std::move(made)}); });
    throw_if(a.get().first, "zklock::testing::create_node " + path);
}

std::string create_sequential_node(Session& session, const std::string& prefix, const std::string& data,
                                   bool ephemeral) {
    answer<std::string> a;
    seam::create_node(session, prefix, data, ephemeral, true,
                      [p = a.promise](std::error_code ec, std::string made) { p->set_value({ec, std::move(made)}); });
    auto [ec, made] = a.get();
    throw_if(ec, "zklock::testing::create_sequential_node " + prefix);
    return made;
}

void set_acl(Session& session, const std::string& path, const acl_list& acl) {
    answer<int> a;
    seam::set_acl(session, path, acl, [p = a.promise](std::error_code ec) { p->set_value({ec, 0}); });
    throw_if(a.get().first, "zklock::testing::set_acl " + path);
}

acl_list get_acl(Session& session, const std::string& path) {
    answer<acl_list> a;
    seam::get_acl(session, path, [p = a.promise](std::error_code ec, acl_list acl) { p->set_value({ec, std::move(acl)}); });
    auto [ec, acl] = a.get();
    throw_if(ec, "zklock::testing::get_acl " + path);
    return acl;
}

} // namespace zklock::testing
