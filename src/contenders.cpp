#include <zklock/mutex.hpp>

#include "contender.hpp"
#include "detail/internal_access.hpp"

#include <zklock/detail/limits.hpp>
#include <zklock/detail/reply_kind.hpp>
#include <zklock/detail/lock_node.hpp>
#include <zklock/detail/path.hpp>

#include <algorithm>
#include <future>

namespace zklock {
namespace {

struct listing : std::enable_shared_from_this<listing> {
    std::shared_ptr<detail::session_impl> session;
    std::string path;
    std::promise<std::pair<std::error_code, queue_listing>> result;
    std::vector<detail::lock_node> nodes;
    std::vector<std::string> foreign;
    std::vector<contender> out;
    std::size_t pending = 0;
    bool done = false;
    std::optional<boost::asio::steady_timer> timer;
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
        result.set_value({ec, queue_listing{std::move(found), std::move(foreign)}});
    }

    void start() {
        auto self = shared_from_this();
        timer.emplace(session->strand());
        timer->expires_after(session->options().connect_timeout);
        timer->async_wait([self](boost::system::error_code ec) {
            if (!ec) self->finish(make_error_code(errc::timeout));
        });
        waiter = session->when_connected([self](std::error_code ec) {
            self->waiter = 0;
            if (self->done) return;
            if (ec) return self->finish(ec);
            self->timer->cancel();  // the deadline is for connecting; the listing itself is not cut short
            self->list();
        });
    }

    // An absent lock is an empty queue, unless the connect string's chroot is
    // absent too: then every path is, and the chroot is the error.
    void absent() {
        if (detail::chroot_of(session->options().connect).empty()) return finish({});
        auto self = shared_from_this();
        session->exists("/", {}, [self](int rc, const detail::node_stat&) {
            if (!self->done) self->finish(rc == ZNONODE ? make_error_code(errc::no_node) : std::error_code());
        });
    }

    void list() {
        auto self = shared_from_this();
        session->get_children(path, [self](int rc, std::vector<std::string> children) {
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
        });
    }
};

queue_listing list_children(const std::shared_ptr<detail::session_impl>& session, const std::string& path,
                            std::error_code& ec) {
    const auto check = detail::validate_lock_path(path);
    if (!check) {
        ec = check.error;
        return {};
    }
    if (session->on_session_thread()) {
        ec = make_error_code(errc::would_deadlock);
        return {};
    }
    auto l = std::make_shared<listing>();
    l->session = session;
    l->path = path;
    auto f = l->result.get_future();
    l->session->post([l] { l->start(); });
    auto [e, out] = f.get();
    ec = e;
    return out;
}

} // namespace

namespace detail {

std::vector<zklock::contender> list_contenders(const std::shared_ptr<session_impl>& session, const std::string& path,
                                               std::error_code& ec) {
    return list_children(session, path, ec).contenders;
}

} // namespace detail

std::vector<contender> list_contenders(Session& session, const std::string& path, std::error_code& ec) {
    return detail::list_contenders(detail::internal_access::session(session), path, ec);
}

queue_listing list_queue(Session& session, const std::string& path, std::error_code& ec) {
    return list_children(detail::internal_access::session(session), path, ec);
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
