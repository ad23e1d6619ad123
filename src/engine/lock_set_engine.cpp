// The lock set's engine: performs fsm/set_acquire_machine's actions and
// feeds the answers, watches and session events back.
#include "engine/lock_set_engine.hpp"

#include "fsm/lock_node.hpp"

namespace zklock::detail {
namespace asio = boost::asio;

std::shared_ptr<lock_set_engine> lock_set_engine::make(std::shared_ptr<session_impl> session,
                                                       std::vector<std::string> dirs, std::string node_data,
                                                       std::shared_ptr<const c_acl> acl,
                                                       std::chrono::milliseconds lock_delay) {
    std::shared_ptr<lock_set_engine> c(
        new lock_set_engine(std::move(session), std::move(dirs), std::move(node_data), std::move(acl), lock_delay));
    c->session()->subscribe(*c);
    return c;
}

lock_set_engine::lock_set_engine(std::shared_ptr<session_impl> session, std::vector<std::string> dirs,
                                 std::string node_data, std::shared_ptr<const c_acl> acl,
                                 std::chrono::milliseconds lock_delay)
    : queue_entry(std::move(session)),
      node_data_(std::move(node_data)),
      acl_(acl ? std::move(acl) : session_->acl()),
      positions_(dirs.size()),
      node_paths_(dirs.size()) {
    setup_.dirs = std::move(dirs);
    setup_.lock_delay = lock_delay;
    setup_.policy = session_->words_for(acl_);
    setup_.lose_on_suspension = session_->options().lose_locks_on_suspension;
}

std::vector<std::optional<std::size_t>> lock_set_engine::queue_positions() const {
    std::lock_guard lk(mutex_);
    return positions_;
}

std::vector<std::string> lock_set_engine::node_paths() const {
    std::lock_guard lk(mutex_);
    return node_paths_;
}

void lock_set_engine::set_positions(const std::vector<std::optional<std::size_t>>& positions) {
    {
        std::lock_guard lk(mutex_);
        positions_ = positions;
    }
    // A set's place: the farthest from the front of its queues.
    std::optional<std::size_t> farthest;
    for (const auto& p : positions)
        if (p) farthest = std::max(farthest.value_or(0), *p);
    set_position(farthest ? static_cast<std::int64_t>(*farthest) : -1);
    if (farthest) report_position(*farthest);
}

std::string lock_set_engine::event_path() const {
    std::string out;
    for (const auto& dir : setup_.dirs) out += (out.empty() ? "" : ",") + dir;
    return out;
}

void lock_set_engine::clear_nodes() {
    {
        std::lock_guard lk(mutex_);
        node_paths_.assign(setup_.dirs.size(), {});
        positions_.assign(setup_.dirs.size(), std::nullopt);
    }
    set_position(-1);
}

std::string lock_set_engine::describe() const {
    static constexpr const char* phases[] = {"idle", "acquiring", "held"};
    std::string out = std::string("phase=") + phases[static_cast<int>(phase_)];
    out += std::string(" busy=") + (busy_ ? "yes" : "no") + " held=" + (held_ ? "yes" : "no");
    if (!attempt_) return out + " attempt=none";
    return out + " " + attempt_->fsm.describe();
}

// ---- driving the machine ------------------------------------------------------------

template <class Event>
void lock_set_engine::feed(const std::shared_ptr<attempt>& a, Event&& event) {
    a->fsm.session = {session_->session_id(), session_->connected(), session_->state() == session_state::closed,
                      attempt_budget()};
    // An action that ends the attempt (fail, requeue, give up) comes last.
    bool granted = false;
    for (const auto& action : event(a->fsm)) granted = perform(a, action) || granted;
    if (!granted) return;
    watch_own_nodes_later(a);
    complete_grant();
}

// The own-node watches wait until the hold has settled, as a Mutex's do
// (contender_engine::watch_own_node_later): a short hold never pays for them.
// (Not in feed(): a lambda there is a new type per instantiation, and feeding
// it would instantiate feed() without end.)
void lock_set_engine::watch_own_nodes_later(const std::shared_ptr<attempt>& a) {
    session_->after_settling([weak = std::weak_ptr<lock_set_engine>(shared_from_this()), held = std::weak_ptr<attempt>(a)] {
        const auto self = weak.lock();
        if (const auto a = held.lock(); self && a) self->feed(a, [](set_acquire_machine& m) { return m.hold_settled(); });
    });
}

bool lock_set_engine::perform(const std::shared_ptr<attempt>& a, const set_action& action) {
    using kind = set_action::kind;
    switch (action.what) {
    case kind::grant: begin_hold(action.number); return true;
    case kind::node_gone:
        // One node gone loses the whole set: nobody may act on it from now on.
        held_ = false;
        token_ = 0;
        find_loss_reason(setup_.dirs[0], [this, a] { return phase_ == phase::held && attempt_ == a; });
        break;
    case kind::lose: lose(action.ec); break;
    case kind::requeue: new_attempt(); break;
    case kind::fail: fail(action.ec, action.detail); break;
    case kind::give_up: abandon({}); break;
    case kind::cleaned_up:
        if (auto done = std::exchange(a->done, nullptr)) done(action.ec);
        break;
    case kind::positions: set_positions(a->fsm.positions()); break;
    case kind::revocation_request:
    case kind::revoke:
        // A request to any node of the set concerns the whole set.
        if (attempt_ == a)
            revocation_requested(setup_.dirs[action.queue], path_of(action.queue, action.name),
                                 action.what == kind::revoke);
        break;
    case kind::forget_positions: clear_nodes(); break;
    case kind::nodes_known: {
        std::lock_guard lk(mutex_);
        node_paths_ = a->fsm.node_paths();
        break;
    }
    case kind::count_attempt:
    case kind::count_wakeup: {
        std::lock_guard lk(mutex_);
        ++(action.what == kind::count_attempt ? stats_.attempts : stats_.wakeups);
        break;
    }
    case kind::start_delay:
        a->delay_timer = std::make_shared<timer>(session_->strand());
        a->delay_timer->expires_after(setup_.lock_delay);
        a->delay_timer->async_wait([weak = std::weak_ptr<lock_set_engine>(shared_from_this()), a](
                                       boost::system::error_code ec) {
            if (auto self = weak.lock(); self && !ec)
                self->feed(a, [](set_acquire_machine& m) { return m.delay_elapsed(); });
        });
        break;
    case kind::wait_connected:
        session_->when_connected([self = shared_from_this(), a, step = action.step, i = action.queue](std::error_code ec) {
            self->feed(a, [&](set_acquire_machine& m) { return ec ? m.connect_failed(ec) : m.connected(step, i); });
        });
        break;
    default: send(a, action); break;
    }
    return false;
}

void lock_set_engine::send(const std::shared_ptr<attempt>& a, const set_action& action) {
    using kind = set_action::kind;
    auto self = shared_from_this();
    const auto i = action.queue;
    switch (action.what) {
    case kind::read_dir_before:
        return session_->get_data(setup_.dirs[i], {}, [self, a, i](int rc, std::string data, const node_stat& st) {
            self->feed(a, [&](set_acquire_machine& m) { return m.dir_before_read(i, rc, data, st); });
        });
    case kind::read_handover:
        return session_->get_data(setup_.dirs[i], {}, [self, a, i](int rc, std::string data, const node_stat&) {
            self->feed(a, [&](set_acquire_machine& m) { return m.handover_read(i, rc, data); });
        });
    case kind::create: return send_create(a, action);
    case kind::confirm_session:
        // Answered, it is the hold's budget basis (noted before this callback runs).
        return session_->sync(setup_.dirs[0], [self, a](int rc) {
            self->feed(a, [&](set_acquire_machine& m) { return m.synced(rc); });
        });
    case kind::ensure_parents:
        return session_->ensure_parents(setup_.dirs[i], {}, acl_, [self, a, i](int rc, const std::string& at) {
            self->feed(a, [&](set_acquire_machine& m) { return m.parents_ensured(i, rc, at); });
        });
    case kind::list:
        return session_->list_shared(setup_.dirs[i], [self, a, i, which = action.which](int rc,
                                                                                 const children_listing& children) {
            self->feed(a, [&](set_acquire_machine& m) { return m.listed(i, which, rc, children.children()); });
        });
    case kind::read_token:
        return session_->get_data(path_of(0, action.name), {}, [self, a](int rc, std::string, const node_stat& st) {
            self->feed(a, [&](set_acquire_machine& m) { return m.token_read(rc, st); });
        });
    case kind::watch_node:
    case kind::watch_own_node: return send_watch(a, action);
    case kind::delete_set:
    case kind::delete_by_guid: return send_delete(a, action);
    default: return;
    }
}

void lock_set_engine::send_create(const std::shared_ptr<attempt>& a, const set_action& action) {
    std::vector<multi_op> ops;
    for (const auto& dir : setup_.dirs)
        ops.push_back({multi_op::kind::create, child_path(dir, action.name), node_data_, ZOO_EPHEMERAL_SEQUENTIAL, -1, acl_});
    session_->multi(std::move(ops), [self = shared_from_this(), a](int rc, std::vector<int> errors,
                                                                   std::vector<std::string> created) {
        self->feed(a, [&](set_acquire_machine& m) { return m.created(rc, errors, created); });
    });
}

void lock_set_engine::send_watch(const std::shared_ptr<attempt>& a, const set_action& action) {
    auto self = shared_from_this();
    const auto i = action.queue;
    // getData, not exists: a node that is already gone leaves no watch behind.
    if (action.what == set_action::kind::watch_own_node)
        return session_->get_data(
            path_of(i, action.name),
            [self, a, i](int type) { self->feed(a, [&](set_acquire_machine& m) { return m.own_watch_fired(i, type); }); },
            [self, a, i](int rc, std::string data, const node_stat& st) {
                self->feed(a, [&](set_acquire_machine& m) { return m.own_watch_set(i, rc, data, st.version); });
            });
    session_->get_data(
        path_of(i, action.name),
        [self, a, i, name = action.name, generation = action.number](int type) {
            self->feed(a, [&](set_acquire_machine& m) { return m.watch_fired(i, name, generation, type); });
        },
        [self, a, i, name = action.name, generation = action.number](int rc, std::string, const node_stat& st) {
            self->feed(a, [&](set_acquire_machine& m) { return m.watch_set(i, name, generation, rc, st); });
        });
}

void lock_set_engine::send_delete(const std::shared_ptr<attempt>& a, const set_action& action) {
    std::function<void(std::error_code)> answer;
    if (action.wait)
        answer = [self = shared_from_this(), a](std::error_code ec) {
            self->feed(a, [&](set_acquire_machine& m) { return m.deleted(ec); });
        };
    if (action.what == set_action::kind::delete_by_guid)
        return session_->delete_owned_by_guid(setup_.dirs[action.queue], action.name, action.number, std::move(answer));
    std::vector<multi_op> records;
    for (const auto& [dir, data] : action.records)
        records.push_back(multi_op{multi_op::kind::set_data, dir, data, 0, -1, nullptr});
    session_->delete_owned_set(action.paths, action.number, std::move(answer), std::move(records));
}

// ---- the front half's hooks ---------------------------------------------------------

void lock_set_engine::new_attempt() {
    setup_.no_wait = no_wait_;
    setup_.revocable = revocable();
    note_attempt_start();
    // The guid is in every node's name: a lost transaction reply's nodes are found by it.
    auto a = std::make_shared<attempt>(setup_, new_guid());
    attempt_ = a;
    feed(a, [](set_acquire_machine& m) { return m.begin(); });
}

void lock_set_engine::abandon(std::error_code ec) {
    if (phase_ != phase::acquiring) return;  // a second cancel or a late deadline: already done
    auto finish = stop_acquiring(ec);
    clear_nodes();
    auto a = std::exchange(attempt_, nullptr);
    if (!a) return finish({});
    a->done = within_session_timeout(*session_, std::move(finish), {});
    feed(a, [](set_acquire_machine& m) { return m.cancel(); });
}

void lock_set_engine::fail(std::error_code ec, std::string detail) {
    if (phase_ == phase::held) return lose(ec);  // a failure reported while held is a loss
    if (phase_ == phase::acquiring && !detail.empty()) set_failure_detail(std::move(detail));
    abandon(ec);
}

void lock_set_engine::do_release(std::function<void(std::error_code)> done) {
    if (phase_ != phase::held || !attempt_) {
        if (done) done(make_error_code(errc::not_held));
        return;
    }
    auto a = std::exchange(attempt_, nullptr);
    clear_nodes();  // before the "released" event
    // A server that takes the deletes and never answers: after the session
    // timeout the release completes with errc::timeout (not confirmed; the
    // session keeps the deletes).
    a->done = end_by_release(std::move(done));
    feed(a, [](set_acquire_machine& m) { return m.release(); });
}

void lock_set_engine::lose(std::error_code ec) {
    if (phase_ != phase::held) return;
    auto a = std::exchange(attempt_, nullptr);
    auto next = end_hold();
    token_ = 0;
    clear_nodes();
    if (a) feed(a, [ec](set_acquire_machine& m) { return m.lost(ec); });
    report_loss(ec, std::move(next));
}

void lock_set_engine::let_go_revoked() {
    if (phase_ != phase::held || !attempt_) return;
    // An unlock() that came first releases; a node that went is a loss of its own.
    if (!held_.exchange(false)) return;
    auto a = std::exchange(attempt_, nullptr);
    auto next = end_hold();
    token_ = 0;
    clear_nodes();
    // Every node deleted as a release deletes them; nobody waits for it.
    feed(a, [](set_acquire_machine& m) { return m.release(); });
    report_loss(make_error_code(errc::revoked), std::move(next));
}

void lock_set_engine::on_session_event(session_event e) {
    if (!attempt_) return;
    const auto reason = e == session_event::closed ? session_->close_reason() : std::error_code{};
    feed(attempt_, [e, reason](set_acquire_machine& m) { return m.session_changed(e, reason); });
}

} // namespace zklock::detail
