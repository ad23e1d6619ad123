#include <zklock/detail/session_seam.hpp>

#include <zklock/error.hpp>

#include "session/session_access.hpp"
#include "session/session_impl.hpp"

#include <memory>
#include <utility>

namespace zklock::seam {

namespace {

using detail::session_impl;

// Runs `send(impl)` on the strand once connected, or `closed()` when the
// session closes first.
template <class Send, class Closed>
void when_connected(Session& session, Send send, Closed closed) {
    auto impl = detail::session_access::session(session);
    impl->post([impl, send = std::move(send), closed = std::move(closed)]() mutable {
        impl->when_connected([impl, send = std::move(send), closed = std::move(closed)](std::error_code ec) mutable {
            if (ec) return closed();
            send(*impl);
        });
    });
}

} // namespace

void run_on_strand(Session& session, std::function<void(const strand_turn&)> fn) {
    auto impl = detail::session_access::session(session);
    impl->post([impl, fn = std::move(fn)] {
        strand_turn turn;
        turn.on_session_thread = impl->on_session_thread();
        if (const auto id = impl->client_id()) turn.identity = session_identity{id->client_id, std::string(id->passwd, sizeof id->passwd)};
        fn(turn);
    });
}

void remove_node(Session& session, std::string path, std::function<void(std::error_code)> done) {
    auto shared = std::make_shared<std::function<void(std::error_code)>>(std::move(done));
    when_connected(
        session,
        [path = std::move(path), shared](session_impl& s) {
            s.remove(path, -1, [shared](int rc) { (*shared)(from_zookeeper(rc)); });
        },
        [shared] { (*shared)(make_error_code(errc::closing)); });
}

void create_node(Session& session, std::string path, std::string data, bool ephemeral, bool sequential,
                 std::function<void(std::error_code, std::string)> done) {
    auto shared = std::make_shared<std::function<void(std::error_code, std::string)>>(std::move(done));
    const int flags = (ephemeral ? ZOO_EPHEMERAL : ZOO_PERSISTENT) | (sequential ? ZOO_SEQUENCE : 0);
    when_connected(
        session,
        [path = std::move(path), data = std::move(data), flags, shared](session_impl& s) {
            s.create(path, data, flags, *s.acl(), [shared](int rc, std::string made, const detail::node_stat&) {
                (*shared)(from_zookeeper(rc), std::move(made));
            });
        },
        [shared] { (*shared)(make_error_code(errc::closing), {}); });
}

void set_acl(Session& session, std::string path, acl_list acl, std::function<void(std::error_code)> done) {
    auto shared = std::make_shared<std::function<void(std::error_code)>>(std::move(done));
    auto c = std::make_shared<const detail::c_acl>(acl);
    when_connected(
        session,
        [path = std::move(path), c, shared](session_impl& s) {
            s.set_acl(path, -1, *c, [shared](int rc) { (*shared)(from_zookeeper(rc)); });
        },
        [shared] { (*shared)(make_error_code(errc::closing)); });
}

void get_acl(Session& session, std::string path, std::function<void(std::error_code, acl_list)> done) {
    auto shared = std::make_shared<std::function<void(std::error_code, acl_list)>>(std::move(done));
    when_connected(
        session,
        [path = std::move(path), shared](session_impl& s) {
            s.get_acl(path, [shared](int rc, acl_list acl) { (*shared)(from_zookeeper(rc), std::move(acl)); });
        },
        [shared] { (*shared)(make_error_code(errc::closing), {}); });
}

} // namespace zklock::seam
