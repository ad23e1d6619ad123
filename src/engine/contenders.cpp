#include <zklock/mutex.hpp>

#include "engine/contender.hpp"
#include "engine/queue_listing.hpp"
#include "support/blocking_call.hpp"
#include "support/io_seam.hpp"
#include "session/session_access.hpp"

#include "fsm/limits.hpp"
#include "fsm/reply_kind.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/path.hpp"

#include <algorithm>
#include <future>

namespace zklock {
namespace {

struct queue_read : std::enable_shared_from_this<queue_read> {
    std::shared_ptr<detail::session_impl> session;
    std::string path;
    std::function<void()> on_change;  // set: the listing leaves a watch that calls it once
    bool connect_deadline = true;
    std::function<void(std::error_code, queue_listing)> done_fn;
    std::vector<detail::lock_node> nodes;
    std::vector<std::string> foreign;
    std::vector<contender> out;
    std::size_t pending = 0;
    bool path_exists = true;
    bool done = false;
    std::optional<detail::timer> timer;
    std::uint64_t waiter = 0;

    void finish(std::error_code ec) {
        if (done) return;
        done = true;
        if (timer) timer->cancel();
        if (waiter) session->cancel_connect_waiter(waiter);
        std::vector<contender> found;
        for (auto& c : out)
            if (!c.node.empty()) found.push_back(std::move(c));
        for (std::size_t i = 0; i < found.size(); ++i) found[i].position = i;
        done_fn(ec, queue_listing{std::move(found), std::move(foreign), path_exists});
    }

    void start() {
        auto self = shared_from_this();
        if (connect_deadline) {
            timer.emplace(session->strand());
            timer->expires_after(session->options().connect_timeout);
            timer->async_wait([self](boost::system::error_code ec) {
                if (!ec) self->finish(make_error_code(errc::timeout));
            });
        }
        waiter = session->when_connected([self](std::error_code ec) {
            self->waiter = 0;
            if (self->done) return;
            if (ec) return self->finish(ec);
            if (self->timer) self->timer->cancel();  // the deadline is for connecting; the listing itself is not cut short
            self->list();
        });
    }

    // A watch's one call of on_change.
    detail::session_impl::watch_fn watcher() const {
        if (!on_change) return {};
        return [fn = on_change](int) { fn(); };
    }

    // An absent lock is an empty queue, unless the connect string's chroot is
    // absent too: then every path is, and the chroot is the error. A watching
    // listing leaves an exists watch on the path (its creation is a change).
    void absent() {
        path_exists = false;
        auto self = shared_from_this();
        auto chroot = [self] {
            if (detail::chroot_of(self->session->options().connect).empty()) return self->finish({});
            self->session->exists("/", {}, [self](int rc, const detail::node_stat&) {
                if (!self->done) self->finish(rc == ZNONODE ? make_error_code(errc::no_node) : std::error_code());
            });
        };
        if (!on_change) return chroot();
        session->exists(path, watcher(), [self, chroot](int rc, const detail::node_stat&) {
            if (self->done) return;
            if (rc == ZOK) self->on_change();  // created since the listing: its watch is on data, list again
            else if (rc != ZNONODE) return self->finish(detail::reply_error(rc));
            chroot();
        });
    }

    void list() {
        auto self = shared_from_this();
        auto answer = [self](int rc, std::vector<std::string> children) {
            if (self->done) return;
            if (rc == ZNONODE) return self->absent();
            if (rc != ZOK) return self->finish(detail::reply_error(rc));
            self->nodes = detail::sorted_contenders(children);
            for (auto& child : children)
                if (!detail::recognise(child)) self->foreign.push_back(std::move(child));
            std::sort(self->foreign.begin(), self->foreign.end());
            self->out.resize(self->nodes.size());
            self->pending = self->nodes.size();
            if (self->pending == 0) return self->finish({});
            for (std::size_t i = 0; i < self->nodes.size(); ++i) {
                self->session->get_data(self->path + "/" + self->nodes[i].name, {},
                                        [self, i](int drc, std::string data, const detail::node_stat& st) {
                                            if (self->done) return;
                                            if (drc == ZOK) {
                                                auto& c = self->out[i];
                                                c.node = self->nodes[i].name;
                                                c.shared = self->nodes[i].shared;
                                                c.dialect = detail::dialect_name(self->nodes[i].dialect);
                                                c.fencing_token = st.czxid;
                                                c.owner_session = st.ephemeral_owner;
                                                c.persistent = st.ephemeral_owner == 0;
                                                c.created_ms = st.ctime_ms;
                                                c.data = std::move(data);
                                            } else if (drc != ZNONODE) {
                                                return self->finish(detail::reply_error(drc));
                                            }
                                            if (--self->pending == 0) self->finish({});
                                        });
            }
        };
        if (on_change) session->get_children_watch(path, watcher(), std::move(answer));
        else session->get_children(path, std::move(answer));
    }
};

queue_listing list_children(const std::shared_ptr<detail::session_impl>& session, const std::string& path,
                            std::error_code& ec) {
    const auto check = detail::validate_lock_path(path);
    if (!check) {
        ec = check.error;
        return {};
    }
    auto [e, out] = detail::wait_for_completion<queue_listing>(
        session->on_session_thread(), [&](auto done) { detail::list_queue_async(session, path, {}, true, done); });
    ec = e;
    return std::move(out);
}

} // namespace

namespace detail {

void list_queue_async(const std::shared_ptr<session_impl>& session, std::string path, std::function<void()> on_change,
                      bool connect_deadline, std::function<void(std::error_code, queue_listing)> done) {
    auto l = std::make_shared<queue_read>();
    l->session = session;
    l->path = std::move(path);
    l->on_change = std::move(on_change);
    l->connect_deadline = connect_deadline;
    l->done_fn = std::move(done);
    session->post([l] { l->start(); });
}

std::vector<zklock::contender> list_contenders(const std::shared_ptr<session_impl>& session, const std::string& path,
                                               std::error_code& ec) {
    return list_children(session, path, ec).contenders;
}

} // namespace detail

std::vector<contender> list_contenders(Session& session, const std::string& path, std::error_code& ec) {
    return detail::list_contenders(detail::session_access::session(session), path, ec);
}

queue_listing list_queue(Session& session, const std::string& path, std::error_code& ec) {
    return list_children(detail::session_access::session(session), path, ec);
}

queue_listing list_queue(Session& session, const std::string& path) {
    if (const auto check = detail::validate_lock_path(path); !check)
        throw error(check.error, "zklock::list_queue: " + check.reason + ": '" + path + "'");
    std::error_code ec;
    auto out = list_queue(session, path, ec);
    throw_if(ec, ("zklock::list_queue " + path).c_str());
    return out;
}

std::vector<contender> list_contenders(Session& session, const std::string& path) {
    if (const auto check = detail::validate_lock_path(path); !check)
        throw error(check.error, "zklock::list_contenders: " + check.reason + ": '" + path + "'");
    std::error_code ec;
    auto out = list_contenders(session, path, ec);
    throw_if(ec, ("zklock::list_contenders " + path).c_str());
    return out;
}

} // namespace zklock
