#include "engine/contender.hpp"
#include "engine/release_txn.hpp"

#include "fsm/acl_check.hpp"
#include "fsm/dialect.hpp"
#include "fsm/limits.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/release_proof.hpp"
#include "fsm/reply_kind.hpp"
#include <zklock/error.hpp>

#include <boost/asio/error.hpp>

#include <zookeeper.h>

#include <algorithm>
#include <string>
#include <vector>

namespace zklock::detail {
namespace asio = boost::asio;

std::shared_ptr<contender_engine> contender_engine::make(std::shared_ptr<session_impl> session, std::string dir,
                                                        queue_rule rule, std::shared_ptr<const std::string> node_data,
                                                        std::shared_ptr<const c_acl> acl) {
    std::vector<std::string> dirs;
    dirs.push_back(std::move(dir));
    return make_engine(std::move(session), std::move(dirs), std::move(rule), std::move(node_data), std::move(acl));
}

std::shared_ptr<contender_engine> contender_engine::make(std::shared_ptr<session_impl> session,
                                                        std::vector<std::string> dirs, queue_rule rule,
                                                        std::shared_ptr<const std::string> node_data,
                                                        std::shared_ptr<const c_acl> acl) {
    return make_engine(std::move(session), std::move(dirs), std::move(rule), std::move(node_data), std::move(acl));
}

std::shared_ptr<contender_engine> contender_engine::make_engine(std::shared_ptr<session_impl> session,
                                                               std::vector<std::string> dirs, queue_rule rule,
                                                               std::shared_ptr<const std::string> node_data,
                                                               std::shared_ptr<const c_acl> acl) {
    // One allocation for the engine and its count (the constructor is private:
    // a local class may call it).
    struct made : contender_engine {
        made(std::shared_ptr<session_impl> s, std::vector<std::string> d, queue_rule r,
             std::shared_ptr<const std::string> n, std::shared_ptr<const c_acl> a)
            : contender_engine(std::move(s), std::move(d), std::move(r), std::move(n), std::move(a)) {}
    };
    std::shared_ptr<contender_engine> c = std::make_shared<made>(std::move(session), std::move(dirs), std::move(rule),
                                                                 std::move(node_data), std::move(acl));
    c->session()->subscribe(*c);
    return c;
}

contender_engine::contender_engine(std::shared_ptr<session_impl> session, std::vector<std::string> dirs,
                                   queue_rule rule, std::shared_ptr<const std::string> node_data,
                                   std::shared_ptr<const c_acl> acl)
    : queue_entry(std::move(session)),
      node_data_(node_data ? std::move(node_data) : session_->default_data()),
      acl_(acl ? std::move(acl) : session_->acl()) {
    // A refused lock set gets an engine without directories: it never sends anything.
    setup_.dirs = std::move(dirs);
    for (const auto& d : setup_.dirs) event_path_ += (event_path_.empty() ? "" : ",") + d;
    node_names_.resize(std::max<std::size_t>(setup_.dirs.size(), 1));
    if (setup_.dirs.size() > 1) positions_.resize(setup_.dirs.size());
    // A naming without this role is refused before the engine is made (the recipes' factory).
    setup_.form = form_of(rule.names, rule.role).value_or(node_form{});
    setup_.rule = std::move(rule);
    setup_.policy = session_->words_for(acl_);
    setup_.lose_on_suspension = session_->options().lose_locks_on_suspension;
    setup_.mark_release = setup_.rule.mark_releases;  // the machine marks under the mutex rule only
}

// ---- thread-safe entry points ---------------------------------------------------

std::string contender_engine::node_path() const {
    std::lock_guard lk(mutex_);
    return node_names_.front().empty() ? std::string() : path_of(node_names_.front());  // set once there is a dir
}

std::vector<std::string> contender_engine::node_paths() const {
    std::lock_guard lk(mutex_);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i)
        out.push_back(node_names_[i].empty() ? std::string() : path_of(node_names_[i], i));
    return out;
}

std::vector<std::optional<std::size_t>> contender_engine::queue_positions() const {
    if (setup_.dirs.size() == 1) return {queue_position()};
    std::lock_guard lk(mutex_);
    return positions_;
}

void contender_engine::set_node_name(std::string name, std::size_t queue) {
    std::lock_guard lk(mutex_);
    node_names_[queue] = std::move(name);
}

void contender_engine::forget_nodes() {
    {
        std::lock_guard lk(mutex_);
        for (auto& n : node_names_) n.clear();
        for (auto& p : positions_) p.reset();
    }
    set_position(-1);
}

bool contender_engine::dirs_known() const {
    for (const auto& d : setup_.dirs)
        if (!session_->dirs().contains(d)) return false;
    return true;
}

std::string contender_engine::describe() const {
    static constexpr const char* phases[] = {"idle", "acquiring", "held"};
    std::string out = std::string("phase=") + phases[static_cast<int>(phase_)];
    out += std::string(" busy=") + (busy_ ? "yes" : "no") + " held=" + (held_ ? "yes" : "no");
    out += std::string(" callback=") + (callback_ ? "pending" : "none");
    out += std::string(" deadline_timer=") + (deadline_timer_ ? "set" : "none");
    if (deferred_start_) out += " deferred_start";
    if (!attempt_) return out + " attempt=none";
    return out + " " + attempt_->fsm.describe();
}

// ---- driving the machine ------------------------------------------------------------

void contender_engine::perform(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    using kind = acquire_action::kind;
    // The round that watched a `.released` sibling is over (granted, queued
    // again, failed, given up, cancelled: its node deleted), or a new one starts.
    if (a->proof_watch != 0 &&
        (action.what == kind::grant || action.what == kind::requeue || action.what == kind::fail ||
         action.what == kind::give_up || action.what == kind::cleaned_up || action.what == kind::delete_node ||
         action.what == kind::delete_by_guid || action.what == kind::watch_release))
        drop_release_watch(*a);
    switch (action.what) {
    case kind::grant:
        begin_hold(action.number);
        set_position(0);
        if (!positions_.empty()) {
            std::lock_guard lk(mutex_);
            positions_.assign(positions_.size(), 0);
        }
        watch_own_node_later(a);
        return complete_grant();
    case kind::node_gone:
        // The lock is gone: nobody may act on it from now on. Why: someone deleted
        // the node, or our own session expired (a holder whose process was paused
        // past the session timeout reads the server's deletion before the
        // connection's end).
        held_ = false;
        token_ = 0;
        return find_loss_reason(dir(), [this, a] { return phase_ == phase::held && attempt_ == a; });
    case kind::lose: return lose(action.ec);
    case kind::requeue: return new_attempt();
    case kind::fail: return fail(action.ec, action.detail);
    case kind::give_up: return abandon({});
    case kind::cleaned_up:
        if (auto done = std::exchange(a->done, nullptr)) done({});
        return;
    case kind::position:
        if (!positions_.empty()) {  // a set's places, per queue; its place is the farthest
            std::lock_guard lk(mutex_);
            positions_ = a->fsm.positions();
        }
        set_position(action.number);
        return report_position(static_cast<std::size_t>(action.number));
    case kind::forget_position: return forget_nodes();
    case kind::node_known:
        // A requeue's node found by its guid after the multi's answer was lost: it applied.
        if (requeue_for(a) && !requeue_->in_flight) requeue_.reset();
        return set_node_name(action.name, action.queue);
    case kind::revocation_request:
    case kind::revoke:
        // A request to any node of a set concerns the whole set.
        if (attempt_ != a) return;
        return revocation_requested(setup_.dirs[action.queue], path_of(action.name, action.queue),
                                    action.what == kind::revoke);
    case kind::count_attempt:
    case kind::count_wakeup: {
        std::lock_guard lk(mutex_);
        ++(action.what == kind::count_attempt ? stats_.attempts : stats_.wakeups);
        return;
    }
    case kind::start_delay:
        a->delay_timer = std::make_shared<timer>(session_->strand());
        a->delay_timer->expires_after(setup_.rule.lock_delay);
        a->delay_timer->async_wait([weak = std::weak_ptr<contender_engine>(shared_from_this()), a](
                                       boost::system::error_code ec) {
            if (auto self = weak.lock(); self && !ec) self->feed(a, [](acquire_machine& m) { return m.delay_elapsed(); });
        });
        return;
    case kind::wait_connected:
        if (action.ec) {
            static constexpr const char* steps[] = {"create", "recovery", "listing", "watch of its own node",
                                                    "sync before the grant", "read of its token"};
            session_->log(log_level::warn, "lock " + event_path() + ": its " + steps[static_cast<int>(action.step)] +
                                               " was interrupted (" + action.ec.message() + "); retried once connected");
        }
        session_->when_connected([self = shared_from_this(), a, step = action.step, i = action.queue](std::error_code ec) {
            self->feed(a, [&](acquire_machine& m) { return ec ? m.connect_failed(ec) : m.connected(step, i); });
        });
        return;
    default: return send(a, action);
    }
}

void contender_engine::send(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    using kind = acquire_action::kind;
    auto self = shared_from_this();
    const auto i = action.queue;
    const auto& dir = setup_.dirs[i];
    auto read_dir = [&](auto answer) {
        session_->get_data(dir, {}, [self, a, i, answer](int rc, std::string data, const node_stat& st) {
            self->feed(a, [&](acquire_machine& m) { return answer(m, i, rc, data, st); });
        });
    };
    switch (action.what) {
    case kind::read_dir_data:
        return read_dir([](acquire_machine& m, std::size_t, int rc, const std::string& data, const node_stat& st) {
            return m.dir_data_read(rc, data, st.version);
        });
    case kind::reread_dir_data:
        return read_dir([](acquire_machine& m, std::size_t, int rc, const std::string& data, const node_stat&) {
            return m.dir_data_reread(rc, data);
        });
    case kind::read_dir_before:
        return read_dir([](acquire_machine& m, std::size_t q, int rc, const std::string& data, const node_stat& st) {
            return m.dir_before_read(q, rc, data, st);
        });
    case kind::read_handover:
        return read_dir([](acquire_machine& m, std::size_t q, int rc, const std::string& data, const node_stat& st) {
            return m.handover_read(q, rc, data, st);
        });
    case kind::claim_dir:
        return session_->set_data(dir, setup_.rule.dir_data, static_cast<std::int32_t>(action.number),
                                  [self, a](int rc) { self->feed(a, [&](acquire_machine& m) { return m.dir_claimed(rc); }); });
    case kind::read_dir_acl:
        return session_->get_acl(dir, [self, a, i](int rc, acl_list acl) {
            self->feed(a, [&](acquire_machine& m) { return m.dir_acl_read(i, rc, acl); });
        });
    case kind::make_dir:
        // Known from now on: the session's requests run in order, so every
        // create in the directory sent after this one finds it made (or, when
        // it failed, fails as it would have, NONODE, and makes it then). A burst
        // of acquires in a new directory sends it once, not once each. A create
        // that failed (no parent, refused, cut off) leaves it unknown again.
        // (A set asks for each directory: those the session knows need none.)
        if (session_->dirs().contains(dir)) return;
        session_->dirs().seen(dir);
        return session_->create(dir, setup_.rule.dir_data, ZOO_CONTAINER, *acl_,
                                [self, i](int rc, std::string, const node_stat&) {
                                    if (rc != ZOK && rc != ZNODEEXISTS) self->session_->dirs().gone(self->setup_.dirs[i]);
                                });
    case kind::create: return send_create(a, action);
    case kind::ensure_parents:
        return session_->ensure_parents(dir, setup_.rule.dir_data, acl_, [self, a, i](int rc, const std::string& at) {
            if (rc == ZOK) self->session_->dirs().seen(self->setup_.dirs[i]);
            self->feed(a, [&](acquire_machine& m) { return m.parents_ensured(i, rc, at); });
        });
    case kind::read_token:
        return session_->get_data(path_of(action.name, i), {}, [self, a](int rc, std::string, const node_stat& st) {
            self->feed(a, [&](acquire_machine& m) { return m.token_read(rc, st); });
        });
    case kind::catch_up:
        // Ahead of the recovery listings: their replies come after its answer and decide.
        return session_->sync(dir, [](int) {});
    case kind::confirm_session:
        // Answered, it is the hold's budget basis (noted before this callback runs).
        return session_->sync(dir, [self, a](int rc) {
            self->feed(a, [&](acquire_machine& m) { return m.synced(rc); });
        });
    case kind::list: return send_list(a, action);
    case kind::watch_node:
    case kind::watch_own_node: return send_watch(a, action);
    case kind::watch_release: return send_release_watch(a, action);
    case kind::delete_node:
    case kind::delete_by_guid: return send_delete(a, action);
    default: return;
    }
}

void contender_engine::send_create(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    auto self = shared_from_this();
    if (setup_.dirs.size() > 1) {
        // One transaction: every node gets its zxid, and sequence numbers in
        // every directory are assigned in commit order (no cycle of waits).
        std::vector<multi_op> ops;
        ops.reserve(setup_.dirs.size());
        for (const auto& dir : setup_.dirs)
            ops.push_back({multi_op::kind::create, child_path(dir, action.name), *node_data_, ZOO_EPHEMERAL_SEQUENTIAL,
                           -1, acl_});
        return session_->multi(std::move(ops), [self, a](int rc, std::vector<int> errors, std::vector<std::string> created) {
            if (rc == ZOK)
                for (const auto& dir : self->setup_.dirs) self->session_->dirs().seen(dir);
            self->feed(a, [&](acquire_machine& m) { return m.multi_created(rc, errors, created); });
        });
    }
    if (requeue_for(a)) return send_requeue(a, action);
    session_->create(path_of(action.name), *node_data_, ZOO_EPHEMERAL_SEQUENTIAL, *acl_,
                     [self, a](int rc, std::string name, const node_stat& st) {
                         if (rc == ZOK) self->session_->dirs().seen(self->dir());
                         if (rc == ZNONODE) self->session_->dirs().gone(self->dir());
                         self->feed(a, [&](acquire_machine& m) { return m.created(rc, name, st); });
                     });
}

// The holder's watch on its own node tells it when someone else deletes the
// node. It is set once the hold has lasted session_impl::settle_delay: a
// shorter hold never pays for it (a getData, its reply, and the notification
// of the holder's own delete: a third of an uncontended cycle's client time),
// and a deletion in the hold's first moments is still found, by the watch's
// read finding no node.
void contender_engine::watch_own_node_later(const std::shared_ptr<attempt>& a) {
    session_->after_settling([weak = std::weak_ptr<contender_engine>(shared_from_this()), held = std::weak_ptr<attempt>(a)] {
        const auto self = weak.lock();
        if (const auto a = held.lock(); self && a) self->feed(a, [](acquire_machine& m) { return m.hold_settled(); });
    });
}

void contender_engine::send_list(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    if (requeue_for(a) && requeue_->in_flight && action.which == listing::pipelined) return list_behind_requeue(a, action);
    list_now(a, action);
}

void contender_engine::list_now(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    auto self = shared_from_this();
    const auto which = action.which;
    const auto i = action.queue;
    // A listing without a watch may answer other contenders of this session too.
    if (!action.watch)
        return session_->list_shared(setup_.dirs[i], [self, a, i, which](int rc, const children_listing& children) {
            self->feed(a, [&](acquire_machine& m) { return m.listed(i, which, rc, children); });
        });
    session_->get_children_watch(
        dir(),
        [self, a, generation = action.number](int type) {
            self->feed(a, [&](acquire_machine& m) { return m.watch_fired({}, generation, type); });
        },
        [self, a, which](int rc, std::vector<std::string> children) {
            self->feed(a, [&](acquire_machine& m) { return m.listed(which, rc, children); });
        });
}

void contender_engine::send_watch(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    auto self = shared_from_this();
    const auto i = action.queue;
    // getData, not exists: a node that is already gone leaves no watch behind.
    if (action.what != acquire_action::kind::watch_node) {
        // Our own node: tells a holder (or a waiter) when someone else deletes it.
        return session_->get_data(
            path_of(action.name, i),
            [self, a, i](int type) { self->feed(a, [&](acquire_machine& m) { return m.own_watch_fired(i, type); }); },
            [self, a, i](int rc, std::string data, const node_stat& st) {
                self->feed(a, [&](acquire_machine& m) { return m.own_watch_set(i, rc, data, st.version); });
            });
    }
    session_->get_data(
        path_of(action.name, i),
        [self, a, i, name = action.name, generation = action.number](int type) {
            self->feed(a, [&](acquire_machine& m) { return m.watch_fired(i, name, generation, type); });
        },
        [self, a, i, name = action.name, generation = action.number](int rc, std::string, const node_stat& st) {
            self->feed(a, [&](acquire_machine& m) { return m.watch_set(i, name, generation, rc, st); });
        });
}

void contender_engine::send_release_watch(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    auto self = shared_from_this();
    a->proof_path = release_proof_path(path_of(action.name));
    a->proof_watch = session_->exists(
        a->proof_path,
        [self, a, name = action.name, generation = action.number](int type) {
            self->feed(a, [&](acquire_machine& m) { return m.release_seen(name, generation, type); });
        },
        // The answer tells nothing the watch does not: a sibling already there
        // proves nothing (release_seen waits for its creation), and a failed
        // request leaves no watch (remove_watch then has nothing to remove).
        [](int, const node_stat&) {});
}

void contender_engine::drop_release_watch(attempt& a) {
    session_->remove_watch(a.proof_path, std::exchange(a.proof_watch, 0));
}

void contender_engine::send_delete(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    if (capturing_release_ && requeue_) {
        requeue_->held = a;
        requeue_->release = action;
        return;
    }
    auto done = action.wait ? std::exchange(a->done, nullptr) : nullptr;
    if (action.what == acquire_action::kind::delete_by_guid) {
        // In every directory, with one transaction.
        return session_->delete_owned_by_guid(setup_.dirs, action.name, action.number, std::move(done));
    }
    std::vector<multi_op> records;
    for (const auto& [dir, data] : action.records) records.push_back(multi_op{multi_op::kind::set_data, dir, data, 0, -1, nullptr});
    // Several nodes (a set's): one multi; a node already gone fails it, and
    // the session then deletes the others one by one.
    if (!action.paths.empty()) return release_owned(*session_, action.paths, action.number, std::move(done), std::move(records));
    const auto path = path_of(action.name, action.queue);
    // A marked release also proves itself to the successor (fsm/release_proof.hpp).
    if (action.mark || !records.empty())
        return release_owned(*session_, {path}, action.number, std::move(done), std::move(records), action.mark,
                             action.mark ? acl_ : nullptr);
    session_->delete_owned(path, action.number, std::move(done));
}

// ---- the front half's hooks ---------------------------------------------------------

void contender_engine::new_attempt() {
    // A requeue's release goes only with the create of the attempt it began:
    // an attempt after it (a new session) queues as lock() does.
    if (requeue_ && requeue_->begun) drop_requeue();
    setup_.no_wait = no_wait_;
    setup_.revocable = revocable();
    note_attempt_start();
    // The tag goes in the node's name: a lost create reply's node is found by it.
    auto a = std::make_shared<attempt>(setup_, new_tag(setup_.form));
    attempt_ = a;
    if (requeue_ && !requeue_->begun) {
        requeue_->next = a;
        requeue_->begun = true;
    }
    feed(a, [](acquire_machine& m) { return m.begin(); });
}

void contender_engine::abandon(std::error_code ec) {
    if (phase_ != phase::acquiring) return;  // a second cancel or a late deadline: already done
    auto finish = stop_acquiring(ec);
    forget_nodes();
    drop_requeue();  // cancelled before its multi was sent: the held node goes as unlock() sends it
    auto a = std::exchange(attempt_, nullptr);
    if (!a) return finish({});
    a->done = within_session_timeout(*session_, std::move(finish), {});
    feed(a, [](acquire_machine& m) { return m.cancel(); });
}

void contender_engine::fail(std::error_code ec) {
    if (phase_ == phase::held) return lose(ec);  // a failure reported while held is a loss
    abandon(ec);
}

void contender_engine::fail(std::error_code ec, std::string detail) {
    if (phase_ == phase::acquiring) set_failure_detail(std::move(detail));
    fail(ec);
}

void contender_engine::do_release(std::function<void(std::error_code)> done) {
    if (phase_ != phase::held || !attempt_) {
        if (done) done(make_error_code(errc::not_held));
        return;
    }
    auto a = std::exchange(attempt_, nullptr);
    forget_nodes();
    // A server that takes the delete and never answers: after the session
    // timeout the release completes with errc::timeout (not confirmed; the
    // session keeps the delete).
    a->done = end_by_release(std::move(done));
    feed(a, [](acquire_machine& m) { return m.release(); });
}

void contender_engine::lose(std::error_code ec) {
    if (phase_ != phase::held) return;
    auto a = std::exchange(attempt_, nullptr);
    auto next = end_hold();
    forget_nodes();
    if (a) feed(a, [ec](acquire_machine& m) { return m.lost(ec); });
    report_loss(ec, std::move(next));
}

void contender_engine::let_go_revoked() {
    if (phase_ != phase::held || !attempt_) return;
    // An unlock() that came first (is_held() false, its release queued behind
    // this) releases; a node that went is a loss of its own.
    if (!held_.exchange(false)) return;
    auto a = std::exchange(attempt_, nullptr);
    auto next = end_hold();
    token_ = 0;
    forget_nodes();
    // Deleted as a release deletes it (with the mark: it held); nobody waits for it.
    feed(a, [](acquire_machine& m) { return m.release(); });
    report_loss(make_error_code(errc::revoked), std::move(next));
}

void contender_engine::on_session_event(session_event e) {
    if (!attempt_) return;
    const auto reason = e == session_event::closed ? session_->close_reason() : std::error_code{};
    feed(attempt_, [e, reason](acquire_machine& m) { return m.session_changed(e, reason); });
}

} // namespace zklock::detail
