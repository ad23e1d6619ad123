#include <zklock/testing/faults.hpp>

#include "recipes/internal_access.hpp"
#include "session/session_impl.hpp"

#include <cstring>
#include <functional>
#include <future>
#include <poll.h>

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
    auto impl = zklock::detail::internal_access::session(session);
    if (impl->state() == session_state::closed)
        throw error(make_error_code(errc::session_closed), "SessionFreeze: the session is closed");
    // Hold the session's strand: a handler that waits until thawed.
    auto held = std::make_shared<std::promise<std::optional<clientid_t>>>();
    auto f = held->get_future();
    release_ = std::make_shared<std::promise<void>>();
    impl->post([impl, held, released = release_->get_future().share()] {
        held->set_value(impl->client_id());
        // Run inline on the caller's thread (the session's thread has ended):
        // nothing to hold.
        if (impl->on_session_thread()) released.wait();
    });
    if (f.wait_for(timeout) != std::future_status::ready) {
        thaw();
        throw error(make_error_code(errc::timeout), "SessionFreeze: the session's strand was not free in time");
    }
    if (const auto id = f.get()) {
        client_id_ = id->client_id;
        password_.assign(id->passwd, sizeof id->passwd);
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

// Runs `submit(impl, done)` on the session's strand once connected and waits for
// the return code it passes to `done`.
int on_session(Session& session, const std::function<void(zklock::detail::session_impl&, std::function<void(int)>)>& submit) {
    auto impl = zklock::detail::internal_access::session(session);
    auto p = std::make_shared<std::promise<int>>();
    auto f = p->get_future();
    impl->post([impl, p, submit] {
        impl->when_connected([impl, p, submit](std::error_code ec) {
            if (ec) return p->set_value(ZCLOSING);
            submit(*impl, [p](int rc) { p->set_value(rc); });
        });
    });
    return f.get();
}

} // namespace

void delete_node(Session& session, const std::string& path) {
    const int rc = on_session(session, [path](zklock::detail::session_impl& s, std::function<void(int)> done) {
        s.remove(path, -1, std::move(done));
    });
    throw_if(from_zookeeper(rc), "zklock::testing::delete_node " + path);
}

void create_node(Session& session, const std::string& path, const std::string& data, bool ephemeral) {
    const int rc = on_session(session, [path, data, ephemeral](zklock::detail::session_impl& s, std::function<void(int)> done) {
        s.create(path, data, ephemeral ? ZOO_EPHEMERAL : ZOO_PERSISTENT, *s.acl(),
                 [done = std::move(done)](int rc, std::string, const zklock::detail::node_stat&) { done(rc); });
    });
    throw_if(from_zookeeper(rc), "zklock::testing::create_node " + path);
}

std::string create_sequential_node(Session& session, const std::string& prefix, const std::string& data,
                                   bool ephemeral) {
    auto made = std::make_shared<std::string>();
    const int rc = on_session(session, [prefix, data, ephemeral, made](zklock::detail::session_impl& s, std::function<void(int)> done) {
        s.create(prefix, data, ZOO_SEQUENCE | (ephemeral ? ZOO_EPHEMERAL : ZOO_PERSISTENT), *s.acl(),
                 [made, done = std::move(done)](int rc, std::string path, const zklock::detail::node_stat&) {
                     *made = std::move(path);
                     done(rc);
                 });
    });
    throw_if(from_zookeeper(rc), "zklock::testing::create_sequential_node " + prefix);
    return *made;
}

void set_acl(Session& session, const std::string& path, const acl_list& acl) {
    auto c = std::make_shared<const zklock::detail::c_acl>(acl);
    const int rc = on_session(session, [path, c](zklock::detail::session_impl& s, std::function<void(int)> done) {
        s.set_acl(path, -1, *c, std::move(done));
    });
    throw_if(from_zookeeper(rc), "zklock::testing::set_acl " + path);
}

acl_list get_acl(Session& session, const std::string& path) {
    auto out = std::make_shared<acl_list>();
    const int rc = on_session(session, [path, out](zklock::detail::session_impl& s, std::function<void(int)> done) {
        s.get_acl(path, [out, done = std::move(done)](int rc, acl_list acl) {
            *out = std::move(acl);
            done(rc);
        });
    });
    throw_if(from_zookeeper(rc), "zklock::testing::get_acl " + path);
    return *out;
}

} // namespace zklock::testing
