// The lock set's engine, acquiring: the transaction, recovery by guid, the
// listings, the watches and the grant. Holding and leaving: set_contender_hold.cpp.
#include "set_contender.hpp"

#include <zklock/detail/limits.hpp>
#include <zklock/detail/reply_kind.hpp>

namespace zklock::detail {

namespace {
// The first op of a failed transaction that failed on its own (the ones after
// it report ZRUNTIMEINCONSISTENCY), or 0.
std::size_t failed_op(const std::vector<int>& op_errors) {
    for (std::size_t i = 0; i < op_errors.size(); ++i)
        if (op_errors[i] != ZOK && op_errors[i] != ZRUNTIMEINCONSISTENCY) return i;
    return 0;
}
} // namespace

std::shared_ptr<set_contender> set_contender::make(std::shared_ptr<session_impl> session, std::vector<std::string> dirs,
                                                   std::string node_data, std::shared_ptr<const c_acl> acl,
                                                   std::chrono::milliseconds lock_delay) {
    std::shared_ptr<set_contender> c(
        new set_contender(std::move(session), std::move(dirs), std::move(node_data), std::move(acl), lock_delay));
    c->subscribe();
    return c;
}

set_contender::set_contender(std::shared_ptr<session_impl> session, std::vector<std::string> dirs,
                             std::string node_data, std::shared_ptr<const c_acl> acl,
                             std::chrono::milliseconds lock_delay)
    : queue_entry(std::move(session)),
      dirs_(std::move(dirs)),
      node_data_(std::move(node_data)),
      acl_(acl ? std::move(acl) : session_->acl()),
      lock_delay_(lock_delay),
      positions_(dirs_.size()),
      node_paths_(dirs_.size()) {}

set_contender::~set_contender() { session_->remove_listener(listener_id_); }

void set_contender::subscribe() {
    std::weak_ptr<set_contender> weak = shared_from_this();
    listener_id_ = session_->add_listener([weak](session_event e, std::int64_t) {
        if (auto self = weak.lock()) self->on_session_event(e);
    });
}

std::vector<std::optional<std::size_t>> set_contender::queue_positions() const {
    std::lock_guard lk(mutex_);
    return positions_;
}

std::vector<std::string> set_contender::node_paths() const {
    std::lock_guard lk(mutex_);
    return node_paths_;
}

std::string set_contender::refused(const std::string& what, const std::string& path) const {
    return "not authorized: " + zklock::identity(session_->options().auth) + " may not " + what + " " + path;
}

std::vector<std::string> set_contender::paths_of(const attempt& a) const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < a.nodes.size(); ++i) out.push_back(path_of(i, a.nodes[i]));
    return out;
}

void set_contender::set_positions(const std::vector<std::optional<std::size_t>>& positions) {
    {
        std::lock_guard lk(mutex_);
        positions_ = positions;
    }
    // A set's place in its events: the farthest from the front of its queues.
    std::optional<std::size_t> farthest;
    for (const auto& p : positions)
        if (p) farthest = std::max(farthest.value_or(0), *p);
    if (farthest) report_position(*farthest);
}

std::string set_contender::event_path() const {
    std::string out;
    for (const auto& dir : dirs_) out += (out.empty() ? "" : ",") + dir;
    return out;
}

void set_contender::clear_nodes() {
    std::lock_guard lk(mutex_);
    node_paths_.assign(dirs_.size(), {});
    positions_.assign(dirs_.size(), std::nullopt);
}

std::string set_contender::describe() const {
    static constexpr const char* phases[] = {"idle", "acquiring", "held"};
    std::string out = std::string("phase=") + phases[static_cast<int>(phase_)];
    out += std::string(" busy=") + (busy_ ? "yes" : "no") + " held=" + (held_ ? "yes" : "no");
    if (!attempt_) return out + " attempt=none";
    const auto& a = *attempt_;
    out += " guid=" + a.guid;
    if (a.create_in_flight) out += " create_in_flight";
    if (a.create_uncertain) out += " create_uncertain";
    if (a.node_gone) out += " node_gone";
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
        out += " [" + dirs_[i] + ": " + (a.nodes.empty() ? std::string("-") : a.nodes[i]);
        if (i < a.first.size() && a.first[i]) out += " first";
        if (i < a.watching.size())
            for (const auto& w : a.watching[i]) out += " watching " + w;
        out += "]";
    }
    return out;
}

// ---- acquiring --------------------------------------------------------------------

void set_contender::new_attempt() {
    auto a = std::make_shared<attempt>();
    a->guid = new_guid();  // in every node's name: find_set_by_guid finds them after a lost reply
    const auto n = dirs_.size();
    a->listings.resize(n);
    a->listed.assign(n, false);
    a->first.assign(n, false);
    a->generation.assign(n, 0);
    a->watching.resize(n);
    a->last_blocker.assign(n, false);
    a->before.resize(n);
    a->ahead.resize(n);
    a->ahead_now.resize(n);
    attempt_ = a;
    clear_nodes();
    retry_when_connected(a, [this, a] { send_create(a, 0); });
}

void set_contender::requeue(const std::shared_ptr<attempt>& a) {
    // Someone deleted one of our nodes before the set was granted: the others
    // must not stay behind (they would hold their queues for nothing).
    if (!a->nodes.empty()) session_->delete_owned_set(paths_of(*a), a->owner);
    new_attempt();
}

void set_contender::retry_when_connected(const std::shared_ptr<attempt>& a, std::function<void()> step) {
    queue_entry::retry_when_connected([this, a] { return current(a); }, std::move(step));
}

void set_contender::send_create(const std::shared_ptr<attempt>& a, int parent_retries) {
    a->owner = session_->session_id();
    a->create_in_flight = true;
    a->listed.assign(dirs_.size(), false);
    std::vector<multi_op> ops;
    for (const auto& dir : dirs_)
        ops.push_back({multi_op::kind::create, dir + "/" + node_name_prefix(a->guid), node_data_,
                       ZOO_EPHEMERAL_SEQUENTIAL, -1, acl_});
    auto self = shared_from_this();
    if (lock_delay_.count() > 0)  // lock-delay: each directory as it was before the transaction
        for (std::size_t i = 0; i < dirs_.size(); ++i)
            session_->get_data(dirs_[i], {}, [self, a, i](int rc, std::string data, const node_stat& st) {
                if (self->current(a)) a->before[i] = directory_read(rc, data, st);
            });
    session_->multi(std::move(ops), [self, a, parent_retries](int rc, std::vector<int> errors,
                                                               std::vector<std::string> created) {
        self->on_created(a, rc, errors, created, parent_retries);
    });
    {
        std::lock_guard lk(mutex_);
        ++stats_.attempts;
    }
    // Pipelined: the server runs one session's requests in order, so these
    // listings already hold the nodes the transaction makes.
    for (std::size_t i = 0; i < dirs_.size(); ++i)
        session_->get_children(dirs_[i], [self, a, i](int rc, std::vector<std::string> children) {
            if (!self->current(a) || a->nodes.empty() || rc != ZOK) return;  // the transaction's handler acts
            a->listings[i] = std::move(children);
            a->listed[i] = true;
        });
}

void set_contender::on_created(const std::shared_ptr<attempt>& a, int rc, const std::vector<int>& op_errors,
                               const std::vector<std::string>& created, int parent_retries) {
    a->create_in_flight = false;
    if (rc == ZOK)
        for (const auto& path : created) a->nodes.push_back(path.substr(path.rfind('/') + 1));
    if (connection_trouble(rc)) a->create_uncertain = true;
    if (a->abandoned) {
        // Cancelled while the transaction was in flight: what it made (or may have made) goes.
        if (a->after_create) std::exchange(a->after_create, nullptr)();
        else cleanup(a, [](std::error_code) {});
        return;
    }
    if (!current(a)) return;
    if (rc == ZOK) {
        std::lock_guard lk(mutex_);
        node_paths_ = paths_of(*a);
    }
    if (rc == ZOK) return read_token(a);
    const auto& dir = dirs_[std::min(failed_op(op_errors), dirs_.size() - 1)];
    if (rc == ZNONODE && parent_retries < max_parent_retries) return create_parents(a, parent_retries);
    if (connection_trouble(rc)) return retry_when_connected(a, [this, a] { recover_create(a); });
    if (session_gone(rc)) {
        if (rc == ZCLOSING && session_->state() == session_state::closed)
            return fail(make_error_code(errc::session_closed));
        return new_attempt();  // a new session is opening: queue again there
    }
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("create lock nodes under", dir));
    if (rc == ZINVALIDACL)
        return fail(from_zookeeper(rc), "the server refused the ACL " + to_string(acl_->entries()) + " for " + dir);
    fail(from_zookeeper(rc));
}

void set_contender::create_parents(const std::shared_ptr<attempt>& a, int parent_retries) {
    // A transaction fails as a whole when one directory is missing: create
    // every directory (and its parents) as containers, pipelined, then retry.
    struct pending {
        std::size_t left;
        int rc = ZOK;
        std::string at;
    };
    auto p = std::make_shared<pending>(pending{dirs_.size(), ZOK, {}});
    auto self = shared_from_this();
    for (const auto& dir : dirs_)
        session_->ensure_parents(dir, {}, *acl_, [self, a, p, parent_retries](int prc, const std::string& at) {
            if (prc != ZOK && prc != ZNODEEXISTS && p->rc == ZOK) {
                p->rc = prc;
                p->at = at;
            }
            if (--p->left > 0 || !self->current(a)) return;
            if (p->rc == ZOK) return self->send_create(a, parent_retries + 1);
            if (connection_trouble(p->rc))
                return self->retry_when_connected(a, [self, a, parent_retries] { self->send_create(a, parent_retries + 1); });
            if (p->rc == ZNOAUTH) return self->fail(from_zookeeper(p->rc), self->refused("create", p->at));
            self->fail(from_zookeeper(p->rc));
        });
}

void set_contender::recover_create(const std::shared_ptr<attempt>& a) {
    if (a->owner != session_->session_id()) {
        // A new session: the old one's ephemeral nodes, if any, are gone.
        a->create_uncertain = false;
        return send_create(a, 0);
    }
    {
        std::lock_guard lk(mutex_);
        ++stats_.attempts;
    }
    struct pending {
        std::size_t left;
        int rc = ZOK;
        std::vector<std::vector<std::string>> listings;
    };
    auto p = std::make_shared<pending>(pending{dirs_.size(), ZOK, std::vector<std::vector<std::string>>(dirs_.size())});
    auto self = shared_from_this();
    for (std::size_t i = 0; i < dirs_.size(); ++i)
        session_->get_children(dirs_[i], [self, a, p, i](int rc, std::vector<std::string> children) {
            if (rc != ZOK && rc != ZNONODE && p->rc == ZOK) p->rc = rc;
            p->listings[i] = std::move(children);
            if (--p->left > 0 || !self->current(a)) return;
            if (connection_trouble(p->rc)) return self->retry_when_connected(a, [self, a] { self->recover_create(a); });
            if (session_gone(p->rc)) return;
            if (p->rc != ZOK) return self->fail(from_zookeeper(p->rc));
            a->create_uncertain = false;
            self->adopt(a, find_set_by_guid(p->listings, a->guid));
        });
}

void set_contender::adopt(const std::shared_ptr<attempt>& a, const set_recovery& found) {
    using outcome = set_recovery::outcome;
    if (found.found == outcome::none) return send_create(a, 0);  // the transaction did not commit
    if (found.found == outcome::partial) {
        // It committed, and someone deleted some of our nodes since.
        for (std::size_t i = 0; i < dirs_.size(); ++i)
            if (found.names[i]) session_->delete_owned(path_of(i, *found.names[i]), a->owner);
        return new_attempt();
    }
    for (const auto& name : found.names) a->nodes.push_back(*name);
    {
        std::lock_guard lk(mutex_);
        node_paths_ = paths_of(*a);
    }
    read_token(a);
}

void set_contender::read_token(const std::shared_ptr<attempt>& a) {
    // A create inside a multi returns no Stat: read our first node's. Every
    // node of the transaction has its zxid as czxid. The listings sent behind
    // the transaction are answered before this.
    auto self = shared_from_this();
    session_->get_data(path_of(0, a->nodes[0]), {}, [self, a](int rc, std::string, const node_stat& st) {
        if (!self->current(a)) return;
        if (rc == ZNONODE) return self->requeue(a);
        if (connection_trouble(rc)) return self->retry_when_connected(a, [self, a] { self->read_token(a); });
        if (session_gone(rc)) return;
        if (rc == ZNOAUTH) return self->fail(from_zookeeper(rc), self->refused("read", self->path_of(0, a->nodes[0])));
        if (rc != ZOK) return self->fail(from_zookeeper(rc));
        a->token = st.czxid;
        a->owner = st.ephemeral_owner;
        a->token_read = true;
        bool all = true;
        for (std::size_t i = 0; i < self->dirs_.size(); ++i)
            if (!a->listed[i]) {
                all = false;
                self->list_queue(a, i);
            }
        if (all) self->evaluate(a, std::nullopt);
    });
}

void set_contender::list_queue(const std::shared_ptr<attempt>& a, std::size_t i) {
    {
        std::lock_guard lk(mutex_);
        ++stats_.attempts;
    }
    auto self = shared_from_this();
    session_->get_children(dirs_[i], [self, a, i](int rc, std::vector<std::string> children) {
        if (self->current(a)) self->on_listing(a, i, rc, std::move(children));
    });
}

void set_contender::on_listing(const std::shared_ptr<attempt>& a, std::size_t i, int rc,
                               std::vector<std::string> children) {
    if (phase_ != phase::acquiring) return;
    if (connection_trouble(rc)) return retry_when_connected(a, [this, a, i] { list_queue(a, i); });
    if (session_gone(rc)) return;
    if (rc == ZNONODE) return requeue(a);  // the directory, and our node with it, is gone
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("list", dirs_[i]));
    if (rc != ZOK) return fail(from_zookeeper(rc));
    a->listings[i] = std::move(children);
    a->listed[i] = true;
    if (a->evaluated) return evaluate(a, i);  // a re-check of this queue
    // The first decision takes every queue's listing and the token.
    if (a->token_read && std::find(a->listed.begin(), a->listed.end(), false) == a->listed.end())
        evaluate(a, std::nullopt);
}

void set_contender::evaluate(const std::shared_ptr<attempt>& a, std::optional<std::size_t> only) {
    if (phase_ != phase::acquiring) return;
    a->evaluated = true;
    const auto d = decide_set(a->listings, a->nodes);
    for (const auto i : d.missing)
        if (!only || *only == i) return requeue(a);  // someone deleted our node before the grant
    std::vector<std::optional<std::size_t>> positions = queue_positions();
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
        if (only && *only != i) continue;
        positions[i] = d.queues[i].position;
        if (d.queues[i].acquired) a->first[i] = true;
        if (lock_delay_.count() > 0) {
            a->ahead_now[i] = sequences_ahead(a->listings[i], a->nodes[i]);
            if (!a->first[i]) a->ahead[i] = a->ahead_now[i];
        }
    }
    set_positions(positions);
    if (first_everywhere(*a)) return grant(a);
    if (no_wait_) return abandon({});
    for (std::size_t i = 0; i < dirs_.size(); ++i)
        if ((!only || *only == i) && !a->first[i]) watch(a, i, d.queues[i]);
}

void set_contender::watch(const std::shared_ptr<attempt>& a, std::size_t i, const queue_decision& q) {
    const auto generation = ++a->generation[i];
    a->watching[i] = q.watch;
    a->last_blocker[i] = q.watch_is_last_blocker;
    for (const auto& name : q.watch) watch_node(a, i, name, generation);
}

void set_contender::watch_node(const std::shared_ptr<attempt>& a, std::size_t i, const std::string& name,
                               std::uint64_t generation) {
    auto self = shared_from_this();
    auto stale = [self, a, i, generation] {
        return !self->current(a) || generation != a->generation[i] || self->phase_ != phase::acquiring;
    };
    // getData, not exists: a node that is already gone leaves no watch behind.
    session_->get_data(
        path_of(i, name),
        [self, a, i, name, generation, stale](int type) {
            if (stale()) return;
            if (type == ZOO_DELETED_EVENT) return self->wake(a, i, true, name);
            self->watch_node(a, i, name, generation);  // data changed: watch it again
        },
        [self, a, i, name, generation, stale](int rc, std::string, const node_stat& st) {
            if (stale()) return;
            if (rc == ZOK && st.ephemeral_owner == 0)
                return self->fail(make_error_code(errc::blocked_by_persistent_node),
                                  self->path_of(i, name) +
                                      " is a persistent node (not ephemeral) ahead of us in the queue: it never goes "
                                      "away by itself; an operator must delete it (zkCli.sh delete " +
                                      self->path_of(i, name) + ")");
            if (rc == ZOK) return;  // wait for the watch
            if (rc == ZNONODE) return self->wake(a, i, false, name);
            ++a->generation[i];
            if (connection_trouble(rc)) return self->retry_when_connected(a, [self, a, i] { self->list_queue(a, i); });
            if (session_gone(rc)) return;
            if (rc == ZNOAUTH) return self->fail(from_zookeeper(rc), self->refused("read", self->path_of(i, name)));
            self->fail(from_zookeeper(rc));
        });
}

void set_contender::wake(const std::shared_ptr<attempt>& a, std::size_t i, bool notified, const std::string& name) {
    ++a->generation[i];
    if (notified) {
        std::lock_guard lk(mutex_);
        ++stats_.wakeups;
    }
    if (!a->last_blocker[i]) return list_queue(a, i);
    // The only node ahead of us in this queue went: sequence numbers only
    // grow, so we are first there for as long as our node lives.
    a->first[i] = true;
    a->watching[i].clear();
    a->ahead_now[i] = without(a->ahead[i].value_or(std::vector<std::int32_t>{}), name);
    auto positions = queue_positions();
    positions[i] = 0;
    set_positions(positions);
    if (first_everywhere(*a)) grant(a);
}

void set_contender::grant(const std::shared_ptr<attempt>& a) {
    if (phase_ != phase::acquiring || !current(a)) return;
    if (a->owner != session_->session_id()) return new_attempt();  // nodes of a session that is gone
    if (hold_back(a)) return;
    begin_hold(a->token);
    for (std::size_t i = 0; i < dirs_.size(); ++i) watch_own_node(a, i);
    complete_grant();
}

bool set_contender::hold_back(const std::shared_ptr<attempt>& a) {
    if (lock_delay_.count() <= 0 || a->handover_checked) return false;
    a->handover_checked = true;
    // Every queue's handover must be clean (detail::clean_handover); the
    // directories' records are read in one pipeline.
    struct pending {
        std::size_t left;
        bool clean = true;
    };
    auto p = std::make_shared<pending>(pending{dirs_.size(), true});
    auto self = shared_from_this();
    for (std::size_t i = 0; i < dirs_.size(); ++i)
        session_->get_data(dirs_[i], {}, [self, a, p, i](int rc, std::string data, const node_stat&) {
            handover h{a->ahead[i], a->ahead_now[i], split_release_marker(data), a->before[i], true};
            p->clean = p->clean && rc == ZOK && clean_handover(h);
            if (--p->left > 0 || !self->current(a) || self->phase_ != phase::acquiring) return;
            if (p->clean) return self->grant(a);
            a->delay_timer = std::make_shared<boost::asio::steady_timer>(self->session_->strand());
            a->delay_timer->expires_after(self->lock_delay_);
            a->delay_timer->async_wait([weak = self->weak_from_this(), a](boost::system::error_code ec) {
                auto s = weak.lock();
                if (!ec && s && s->current(a)) s->grant(a);
            });
        });
    return true;
}

} // namespace zklock::detail
