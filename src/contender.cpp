#include "contender.hpp"

#include <zklock/detail/acl_check.hpp>
#include <zklock/detail/dialect.hpp>
#include <zklock/detail/limits.hpp>
#include <zklock/detail/reply_kind.hpp>

#include <boost/asio/error.hpp>

#include <unistd.h>

namespace zklock::detail {
namespace asio = boost::asio;

namespace {
// Parents that vanish between ensure_parents and create (a container the server
// reaped) are re-created this many times before the acquire fails.
constexpr int max_parent_retries = 5;
} // namespace

std::string default_node_data() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    return std::string(host) + ":" + std::to_string(::getpid());
}

std::shared_ptr<contender_engine> contender_engine::make(std::shared_ptr<session_impl> session, std::string dir,
                                                        queue_rule rule, std::string node_data,
                                                        std::shared_ptr<const c_acl> acl) {
    std::shared_ptr<contender_engine> c(new contender_engine(std::move(session), std::move(dir), std::move(rule),
                                                             std::move(node_data), std::move(acl)));
    c->subscribe();
    return c;
}

contender_engine::contender_engine(std::shared_ptr<session_impl> session, std::string dir, queue_rule rule,
                                   std::string node_data, std::shared_ptr<const c_acl> acl)
    : queue_entry(std::move(session)),
      dir_(std::move(dir)),
      rule_(std::move(rule)),
      // A naming without this role is refused before the engine is made (Mutex's check_input).
      form_(form_of(rule_.names, rule_.role).value_or(node_form{})),
      node_data_(std::move(node_data)),
      acl_(acl ? std::move(acl) : session_->acl()) {
    if (!is_open(acl_->entries())) expanded_acl_ = expand_policy(acl_->entries(), session_->options().auth);
}

contender_engine::~contender_engine() { session_->remove_listener(listener_id_); }

void contender_engine::subscribe() {
    std::weak_ptr<contender_engine> weak = shared_from_this();
    listener_id_ = session_->add_listener([weak](session_event e, std::int64_t) {
        if (auto self = weak.lock()) self->on_session_event(e);
    });
}

// ---- thread-safe entry points ---------------------------------------------------

std::optional<std::size_t> contender_engine::queue_position() const noexcept {
    const auto p = position_.load();
    if (p < 0) return std::nullopt;
    return static_cast<std::size_t>(p);
}

std::string contender_engine::node_path() const {
    std::lock_guard lk(mutex_);
    return node_path_;
}

std::string contender_engine::foreign_semaphore_detail(const std::string& peer) const {
    return dir_ + " is " + peer + ": zklock's Semaphore does not share a path with it (each would admit its own "
           "permits); give the zklock semaphore another path";
}

std::string contender_engine::refused(const std::string& what, const std::string& path) const {
    return "not authorized: " + zklock::identity(session_->options().auth) + " may not " + what + " " + path;
}

void contender_engine::on_position(std::function<void(std::size_t)> callback) {
    session_->post([self = shared_from_this(), cb = std::move(callback)]() mutable { self->position_callback_ = std::move(cb); });
}

void contender_engine::set_position(std::int64_t position) {
    if (position_.exchange(position) == position || position < 0 || !position_callback_) return;
    position_callback_(static_cast<std::size_t>(position));
}

std::string contender_engine::describe() const {
    static constexpr const char* phases[] = {"idle", "acquiring", "held"};
    std::string out = std::string("phase=") + phases[static_cast<int>(phase_)];
    out += std::string(" busy=") + (busy_ ? "yes" : "no") + " held=" + (held_ ? "yes" : "no");
    out += std::string(" callback=") + (callback_ ? "pending" : "none");
    out += std::string(" deadline_timer=") + (deadline_timer_ ? "set" : "none");
    if (deferred_start_) out += " deferred_start";
    if (!attempt_) return out + " attempt=none";
    const auto& a = *attempt_;
    out += " node=" + (a.node.empty() ? std::string("-") : a.node) + " owner=" + std::to_string(a.owner);
    if (a.create_in_flight) out += " create_in_flight";
    if (a.create_uncertain) out += " create_uncertain";
    if (a.abandoned) out += " abandoned";
    if (a.after_create) out += " after_create";
    if (a.claiming) out += " claiming";
    if (a.node_gone) out += " node_gone";
    if (a.last_blocker) out += " last_blocker";
    out += " watching=[";
    for (std::size_t i = 0; i < a.watching.size(); ++i) out += (i ? "," : "") + a.watching[i];
    return out + "] watch_generation=" + std::to_string(a.watch_generation);
}

// ---- acquiring ------------------------------------------------------------------

void contender_engine::new_attempt() {
    auto a = std::make_shared<attempt>();
    a->guid = new_tag(form_);  // in the node's name: find_by_guid finds it after a lost create reply
    attempt_ = a;
    set_position(-1);
    retry_when_connected(a, [this, a] { send_create(a, 0); });
}

void contender_engine::retry_when_connected(const std::shared_ptr<attempt>& a, std::function<void()> step) {
    queue_entry::retry_when_connected([this, a] { return current(a); }, std::move(step));
}

void contender_engine::send_create(const std::shared_ptr<attempt>& a, int parent_retries) {
    a->owner = session_->session_id();
    a->create_in_flight = true;
    auto self = shared_from_this();
    if (!rule_.dir_data.empty()) check_dir_data(a);  // its reply comes before the create's
    if (rule_.lock_delay.count() > 0) read_dir_before(a);  // so does this one
    if (!expanded_acl_.empty()) check_dir_acl(a);     // so does this one
    session_->create(path_of(node_name_prefix(a->guid, form_)), node_data_, ZOO_EPHEMERAL_SEQUENTIAL, *acl_,
                     [self, a, parent_retries](int rc, std::string name, const node_stat& st) {
                         self->on_created(a, rc, std::move(name), st, parent_retries);
                     });
    if (rule_.watch_parent) return;  // the baseline lists with a watch after the create
    // Pipelined: the server runs one session's requests in order, so this listing
    // already holds the node the create above makes. One round trip in all.
    {
        std::lock_guard lk(mutex_);
        ++stats_.attempts;
    }
    session_->get_children(dir_, [self, a](int rc, std::vector<std::string> children) {
        if (!self->current(a) || a->node.empty()) return;  // the create failed: its handler acts
        self->evaluate(a, rc, children);
    });
}

void contender_engine::check_dir_data(const std::shared_ptr<attempt>& a) {
    auto self = shared_from_this();
    session_->get_data(dir_, {}, [self, a](int rc, std::string data, const node_stat& st) {
        if (!self->current(a) || rc != ZOK) return;  // a missing directory is created with the data
        if (split_release_marker(data).base.empty()) return self->claim_dir(a, st.version);
        self->compare_dir_data(a, data);
    });
}

void contender_engine::compare_dir_data(const std::shared_ptr<attempt>& a, const std::string& dir_data) {
    // Lock-delay's clean-release record, if any, is not part of the count.
    const auto data = split_release_marker(dir_data).base;
    if (data == rule_.dir_data) return;
    if (const auto peer = foreign_semaphore_data(data)) {
        a->dir_error = make_error_code(errc::foreign_recipe);
        a->dir_error_detail = foreign_semaphore_detail(*peer);
        return;
    }
    a->dir_error = make_error_code(errc::permits_mismatch);
    a->dir_error_detail = dir_ + " is a semaphore with " + data + ", not " + rule_.dir_data;
}

void contender_engine::claim_dir(const std::shared_ptr<attempt>& a, std::int32_t version) {
    // A directory made by someone that stores nothing: claim it. Another first
    // participant may claim it with another count at the same time, so no
    // listing decides until the claim settles.
    a->claiming = true;
    auto self = shared_from_this();
    auto settled = [self, a] {
        a->claiming = false;
        if (!self->current(a) || !a->deferred_listing) return;
        auto children = std::move(*a->deferred_listing);
        a->deferred_listing.reset();
        self->evaluate(a, ZOK, children);
    };
    session_->set_data(dir_, rule_.dir_data, version, [self, a, settled](int rc) {
        if (!self->current(a)) return;
        if (rc == ZOK) return settled();
        // Lost the race (or do not know): what the directory holds now decides.
        self->session_->get_data(self->dir_, {}, [self, a, settled](int drc, std::string data, const node_stat&) {
            if (!self->current(a)) return;
            if (drc == ZOK && !data.empty()) {
                self->compare_dir_data(a, data);
            } else if (drc != ZNONODE && !a->dir_error) {
                a->dir_error = drc == ZOK ? make_error_code(errc::connection_loss) : from_zookeeper(drc);
                a->dir_error_detail = "could not set the permit count of " + self->dir_;
            }
            settled();
        });
    });
}

void contender_engine::check_dir_acl(const std::shared_ptr<attempt>& a) {
    auto self = shared_from_this();
    session_->get_acl(dir_, [self, a](int rc, acl_list actual) {
        if (!self->current(a)) return;
        if (rc == ZNOAUTH && !a->dir_error) {
            a->dir_error = make_error_code(errc::no_auth);
            a->dir_error_detail = self->refused("read the ACL of", self->dir_);
            return;
        }
        if (rc != ZOK) return;  // a missing directory is created with the policy
        if (const auto excess = first_excess(actual, self->expanded_acl_); excess && !a->dir_error) {
            a->dir_error = make_error_code(errc::insecure_acl);
            a->dir_error_detail = "the ACL of " + self->dir_ + " (" + to_string(actual) + ") grants " +
                                  to_string(*excess) + ", more than the ACL policy (" +
                                  to_string(self->acl_->entries()) +
                                  "): someone else created it; set its ACL (setAcl) or delete it";
        }
    });
}

void contender_engine::on_created(const std::shared_ptr<attempt>& a, int rc, std::string name, const node_stat& st,
                           int parent_retries) {
    a->create_in_flight = false;
    if (rc == ZOK) a->node = name.substr(name.rfind('/') + 1);
    if (connection_trouble(rc)) a->create_uncertain = true;
    if (a->abandoned) {
        // Cancelled while the create was in flight: the node (or the doubt) is ours to remove.
        if (a->after_create) std::exchange(a->after_create, nullptr)();  // cleanup() resumes
        else if (rc == ZOK) session_->delete_owned(path_of(a->node), a->owner);
        else if (connection_trouble(rc)) session_->delete_owned_by_guid(dir_, a->guid, a->owner);
        return;
    }
    if (!current(a)) return;
    if (rc == ZOK) {
        a->token = st.czxid;
        a->owner = st.ephemeral_owner;  // the server's word on which session owns it
        {
            std::lock_guard lk(mutex_);
            node_path_ = path_of(a->node);
        }
        if (rule_.watch_parent) list(a);
        return;  // otherwise the pipelined listing decides
    }
    if (rc == ZNONODE && parent_retries < max_parent_retries) {
        auto self = shared_from_this();
        session_->ensure_parents(dir_, rule_.dir_data, *acl_, [self, a, parent_retries](int prc, const std::string& at) {
            if (!self->current(a)) return;
            if (prc != ZOK && prc != ZNODEEXISTS) {
                if (connection_trouble(prc)) return self->retry_when_connected(a, [self, a, parent_retries] {
                    self->send_create(a, parent_retries + 1);
                });
                if (prc == ZNOAUTH) return self->fail(from_zookeeper(prc), self->refused("create", at));
                const auto chroot = chroot_of(self->session_->options().connect);
                if (prc == ZNONODE && !chroot.empty() && at.find('/', 1) == std::string::npos)
                    return self->fail(from_zookeeper(prc), "the chroot " + std::string(chroot) +
                                                               " of the connect string does not exist on the server");
                return self->fail(from_zookeeper(prc));
            }
            self->send_create(a, parent_retries + 1);
        });
        return;
    }
    if (connection_trouble(rc)) {
        // The create may have been applied: find it by guid before creating again.
        retry_when_connected(a, [this, a] { recover_create(a); });
        return;
    }
    if (session_gone(rc)) {
        if (rc == ZCLOSING && session_->state() == session_state::closed) return fail(make_error_code(errc::session_closed));
        new_attempt();  // a new session is opening: queue again there
        return;
    }
    if (rc == ZNOAUTH) {
        // The directory's ACL refused the create; its getACL may say why.
        if (a->dir_error == errc::insecure_acl) return fail(a->dir_error, a->dir_error_detail);
        return fail(from_zookeeper(rc), refused("create lock nodes under", dir_));
    }
    if (rc == ZINVALIDACL)
        return fail(from_zookeeper(rc), "the server refused the ACL " + to_string(acl_->entries()) + " for " + dir_);
    fail(from_zookeeper(rc));
}

void contender_engine::recover_create(const std::shared_ptr<attempt>& a) {
    if (a->owner != session_->session_id()) {
        // A new session: the old one's ephemeral node, if any, is gone.
        a->create_uncertain = false;
        send_create(a, 0);
        return;
    }
    {
        std::lock_guard lk(mutex_);
        ++stats_.attempts;
    }
    auto self = shared_from_this();
    session_->get_children(dir_, [self, a](int rc, std::vector<std::string> children) {
        if (!self->current(a)) return;
        if (connection_trouble(rc)) return self->retry_when_connected(a, [self, a] { self->recover_create(a); });
        if (rc == ZNONODE) return self->send_create(a, 0);
        if (rc != ZOK) return self->fail(from_zookeeper(rc));
        const auto found = find_by_guid(children, a->guid);
        a->create_uncertain = false;
        if (!found) return self->send_create(a, 0);
        a->node = *found;
        // Our node exists: read its Stat for the fencing token, then decide.
        self->session_->get_data(self->path_of(a->node), {}, [self, a, children](int drc, std::string, const node_stat& st) {
            if (!self->current(a)) return;
            if (drc == ZNONODE) return self->send_create(a, 0);
            if (drc != ZOK) return self->retry_when_connected(a, [self, a] { self->recover_create(a); });
            a->token = st.czxid;
            a->owner = st.ephemeral_owner;
            {
                std::lock_guard lk(self->mutex_);
                self->node_path_ = self->path_of(a->node);
            }
            self->evaluate(a, ZOK, children);
        });
    });
}

void contender_engine::list(const std::shared_ptr<attempt>& a) {
    {
        std::lock_guard lk(mutex_);
        ++stats_.attempts;
    }
    auto self = shared_from_this();
    auto on_list = [self, a](int rc, std::vector<std::string> children) {
        if (self->current(a)) self->evaluate(a, rc, children);
    };
    if (!rule_.watch_parent) {
        session_->get_children(dir_, on_list);
        return;
    }
    const auto generation = ++a->watch_generation;
    session_->get_children_watch(
        dir_, [self, a, generation](int type) { self->on_watch_event(a, {}, generation, type); }, on_list);
}

void contender_engine::evaluate(const std::shared_ptr<attempt>& a, int rc, const std::vector<std::string>& children) {
    if (phase_ != phase::acquiring) return;  // a second listing answered after the first decided
    if (connection_trouble(rc)) return retry_when_connected(a, [this, a] { list(a); });
    if (session_gone(rc)) return;  // the session event restarts or fails the acquire
    if (rc == ZNONODE) return new_attempt();  // the lock dir (and our node with it) is gone
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("list", dir_));
    if (rc != ZOK) return fail(from_zookeeper(rc));

    if (a->claiming) {
        a->deferred_listing = children;  // decided once the permit count is settled
        return;
    }
    if (a->dir_error) return fail(a->dir_error, a->dir_error_detail);
    if (!rule_.dir_data.empty())  // a semaphore
        if (const auto peer = foreign_semaphore_children(children))
            return fail(make_error_code(errc::foreign_recipe), foreign_semaphore_detail(*peer));
    const auto d = decide(rule_, children, a->node);
    if (!d.found) {
        // Someone deleted our node before we were granted: queue again.
        new_attempt();
        return;
    }
    set_position(static_cast<std::int64_t>(d.position));
    report_position(d.position);
    if (rule_.lock_delay.count() > 0) note_listing(a, children, d);
    if (d.acquired) return grant(a);
    if (no_wait_) return abandon({});
    if (rule_.watch_parent) return;  // the child watch set by the listing wakes us
    a->watching = d.watch;
    a->last_blocker = d.watch_is_last_blocker;
    watch(a);
}

void contender_engine::watch(const std::shared_ptr<attempt>& a) {
    const auto generation = ++a->watch_generation;
    a->persistent.clear();
    for (const auto& name : a->watching) watch_node(a, name, generation);
}

void contender_engine::watch_node(const std::shared_ptr<attempt>& a, const std::string& name, std::uint64_t generation) {
    auto self = shared_from_this();
    // getData, not exists: a node that is already gone leaves no watch behind.
    session_->get_data(
        path_of(name), [self, a, name, generation](int type) { self->on_watch_event(a, name, generation, type); },
        [self, a, name, generation](int rc, std::string, const node_stat& st) {
            if (!self->current(a) || generation != a->watch_generation) return;
            if (rc == ZOK && st.ephemeral_owner == 0) {
                // Not ephemeral: no session end will ever delete it. When every node
                // we wait for is such a node, waiting is waiting forever.
                a->persistent.push_back(name);
                if (a->persistent.size() == a->watching.size())
                    return self->fail(make_error_code(errc::blocked_by_persistent_node),
                                      self->path_of(name) +
                                          " is a persistent node (not ephemeral) ahead of us in the queue: it "
                                          "never goes away by itself; an operator must delete it "
                                          "(zkCli.sh delete " + self->path_of(name) + ")");
            }
            if (rc == ZOK) return;  // wait for the watch
            if (rc == ZNONODE) return self->wake(a, false, name);
            ++a->watch_generation;  // one retry for the whole round, not one per node
            if (connection_trouble(rc)) return self->retry_when_connected(a, [self, a] { self->list(a); });
            if (session_gone(rc)) return;
            if (rc == ZNOAUTH) return self->fail(from_zookeeper(rc), self->refused("read", self->path_of(name)));
            self->fail(from_zookeeper(rc));
        });
}

void contender_engine::on_watch_event(const std::shared_ptr<attempt>& a, const std::string& name,
                                      std::uint64_t generation, int type) {
    if (!current(a) || generation != a->watch_generation || phase_ != phase::acquiring) return;
    if (rule_.watch_parent) {
        count_notification();
        return list(a);
    }
    if (type == ZOO_DELETED_EVENT) return wake(a, true, name);
    watch_node(a, name, generation);  // data changed (or a spurious event): watch that node again
}

void contender_engine::wake(const std::shared_ptr<attempt>& a, bool notified, const std::string& name) {
    ++a->watch_generation;  // the other watches of this round are stale now
    if (notified) count_notification();
    // Sequence numbers only grow: when the watched nodes were the only ones
    // between us and a lease, one deletion alone grants it.
    if (!a->last_blocker) return list(a);
    note_wake(a, name);
    grant(a);
}

void contender_engine::count_notification() {
    std::lock_guard lk(mutex_);
    ++stats_.wakeups;
}

void contender_engine::grant(const std::shared_ptr<attempt>& a) {
    if (phase_ != phase::acquiring || !current(a)) return;
    if (a->owner != session_->session_id()) {
        // The node belongs to a session that is gone (it was expired between our
        // listing and now): it is not ours to hold. Queue again on this session.
        return new_attempt();
    }
    if (hold_back(a)) return;  // lock-delay: checking the handover, or waiting after a loss
    begin_hold(a->token);
    set_position(0);
    watch_own_node(a);
    complete_grant();
}

void contender_engine::watch_own_node(const std::shared_ptr<attempt>& a) {
    // Tells the holder when someone else deletes its node. Sent after the grant,
    // so it costs the acquire no round trip.
    auto self = shared_from_this();
    auto on_event = [self, a](int type) {
        if (self->phase_ != phase::held || self->attempt_ != a) return;
        if (type == ZOO_DELETED_EVENT) return self->own_node_gone(a);
        self->watch_own_node(a);
    };
    session_->get_data(path_of(a->node), on_event, [self, a](int rc, std::string, const node_stat&) {
        if (self->phase_ != phase::held || self->attempt_ != a) return;
        if (rc == ZNONODE) self->own_node_gone(a);
        else if (connection_trouble(rc)) self->retry_when_connected(a, [self, a] { self->watch_own_node(a); });
    });
}

void contender_engine::own_node_gone(const std::shared_ptr<attempt>& a) {
    // The lock is gone: nobody may act on it from now on.
    held_ = false;
    token_ = 0;
    a->node_gone = true;
    // Why: someone deleted the node, or our own session expired (a holder whose
    // process was paused past the session timeout reads the server's deletion
    // before the connection's end).
    find_loss_reason(dir_, [this, a] { return phase_ == phase::held && attempt_ == a; });
}

// ---- leaving the queue -----------------------------------------------------------

void contender_engine::cleanup(const std::shared_ptr<attempt>& a, std::function<void(std::error_code)> done) {
    if (a->create_in_flight && session_->connected()) {
        // The reply is on its way: clean up once it says what was created.
        a->after_create = [this, a, done = std::move(done), self = shared_from_this()]() mutable {
            cleanup(a, std::move(done));
        };
        return;
    }
    if (!a->node.empty()) {
        if (!session_->connected()) {
            session_->delete_owned(path_of(a->node), a->owner);
            return done({});
        }
        return session_->delete_owned(path_of(a->node), a->owner, std::move(done));
    }
    if (a->create_in_flight || a->create_uncertain) {
        // The node may exist under our guid: the session finds and deletes it.
        if (!session_->connected()) {
            session_->delete_owned_by_guid(dir_, a->guid, a->owner);
            return done({});
        }
        return session_->delete_owned_by_guid(dir_, a->guid, a->owner, std::move(done));
    }
    done({});
}

std::function<void(std::error_code)> within_session_timeout(session_impl& session,
                                                            std::function<void(std::error_code)> done,
                                                            std::error_code late) {
    struct once {
        std::function<void(std::error_code)> fn;
        asio::steady_timer timer;
        void call(std::error_code ec) {
            timer.cancel();
            if (auto f = std::exchange(fn, nullptr)) f(ec);
        }
    };
    auto o = std::make_shared<once>(once{std::move(done), asio::steady_timer(session.strand())});
    auto grace = session.negotiated_timeout();
    if (grace <= std::chrono::milliseconds::zero()) grace = session.options().session_timeout;
    o->timer.expires_after(grace);
    o->timer.async_wait([o, late](boost::system::error_code ec) {
        if (!ec) o->call(late);
    });
    return [o](std::error_code ec) { o->call(ec); };
}

void contender_engine::abandon(std::error_code ec) {
    if (phase_ != phase::acquiring) return;  // a second cancel or a late deadline: already done
    auto finish = stop_acquiring(ec);
    set_position(-1);
    {
        std::lock_guard lk(mutex_);
        node_path_.clear();
    }
    auto a = std::exchange(attempt_, nullptr);
    if (!a) return finish({});
    a->abandoned = true;
    cleanup(a, within_session_timeout(*session_, std::move(finish), {}));
}

void contender_engine::fail(std::error_code ec) {
    if (phase_ == phase::held) return lose(ec);  // e.g. the session closed while re-arming the own-node watch
    abandon(ec);
}

void contender_engine::fail(std::error_code ec, std::string detail) {
    if (phase_ == phase::acquiring) {
        std::lock_guard lk(mutex_);
        failure_detail_ = std::move(detail);
    }
    fail(ec);
}

void contender_engine::do_release(std::function<void(std::error_code)> done) {
    if (phase_ != phase::held || !attempt_) {
        if (done) done(make_error_code(errc::not_held));
        return;
    }
    auto a = std::exchange(attempt_, nullptr);
    set_position(-1);
    {
        std::lock_guard lk(mutex_);
        node_path_.clear();
    }
    // A server that takes the delete and never answers: after the session
    // timeout the release completes with errc::timeout (not confirmed; the
    // session keeps the delete).
    done = end_by_release(std::move(done));
    if (auto record = release_record(*a); !record.empty())
        return session_->delete_owned_set({path_of(a->node)}, a->owner, std::move(done), std::move(record));
    session_->delete_owned(path_of(a->node), a->owner, std::move(done));
}

void contender_engine::lose(std::error_code ec) {
    if (phase_ != phase::held) return;
    auto a = std::exchange(attempt_, nullptr);
    auto next = end_hold();
    set_position(-1);
    {
        std::lock_guard lk(mutex_);
        stats_.total_hold += clock::now() - held_since_;
        node_path_.clear();
    }
    // If the session survives (suspension policy), the node must not block others.
    if (ec == errc::connection_suspended) session_->delete_owned(path_of(a->node), a->owner);
    report_loss(ec, std::move(next));
}

void contender_engine::on_session_event(session_event e) {
    switch (e) {
    case session_event::expired:
        if (phase_ == phase::held) lose(make_error_code(errc::session_expired));
        else if (phase_ == phase::acquiring && attempt_) new_attempt();  // queue again on the new session
        break;
    case session_event::suspended_too_long:
        if (phase_ == phase::held && session_->options().lose_locks_on_suspension)
            lose(make_error_code(errc::connection_suspended));
        break;
    case session_event::closed:
        if (phase_ == phase::held) lose(make_error_code(errc::session_closed));
        else if (phase_ == phase::acquiring) abandon(session_->close_reason());  // auth_failed or session_closed
        break;
    case session_event::reconnected:
        // The session survived: a node of ours that went was deleted by someone else.
        if (phase_ == phase::held && attempt_ && attempt_->node_gone) lose(make_error_code(errc::node_deleted));
        // Watches survive a reconnect, but a re-check costs one listing and
        // covers a deletion the old connection never delivered.
        if (phase_ == phase::acquiring && attempt_ && !attempt_->watching.empty()) {
            ++attempt_->watch_generation;
            list(attempt_);
        }
        break;
    case session_event::connected:
    case session_event::suspended:
        break;
    }
}

} // namespace zklock::detail
