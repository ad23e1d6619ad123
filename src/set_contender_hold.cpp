// The lock set's engine, holding and leaving: the watches on our own nodes,
// loss (any node of the set gone loses the set, and the others are deleted),
// release and cancellation (one multi deletes every node), session events.
#include "set_contender.hpp"

#include <zklock/detail/reply_kind.hpp>

namespace zklock::detail {

void set_contender::watch_own_node(const std::shared_ptr<attempt>& a, std::size_t i) {
    auto self = shared_from_this();
    auto on_event = [self, a, i](int type) {
        if (self->phase_ != phase::held || self->attempt_ != a) return;
        if (type == ZOO_DELETED_EVENT) return self->own_node_gone(a);
        self->watch_own_node(a, i);
    };
    session_->get_data(path_of(i, a->nodes[i]), on_event, [self, a, i](int rc, std::string, const node_stat&) {
        if (self->phase_ != phase::held || self->attempt_ != a) return;
        if (rc == ZNONODE) self->own_node_gone(a);
        else if (connection_trouble(rc)) self->retry_when_connected(a, [self, a, i] { self->watch_own_node(a, i); });
    });
}

void set_contender::own_node_gone(const std::shared_ptr<attempt>& a) {
    if (a->node_gone) return;  // another node of the set told first
    // One node gone loses the whole set: nobody may act on it from now on.
    held_ = false;
    token_ = 0;
    a->node_gone = true;
    find_loss_reason(dirs_[0], [this, a] { return phase_ == phase::held && attempt_ == a; });
}

void set_contender::cleanup(const std::shared_ptr<attempt>& a, std::function<void(std::error_code)> done) {
    if (a->create_in_flight && session_->connected()) {
        // The transaction's reply is on its way: clean up once it says what was made.
        a->after_create = [this, a, done = std::move(done), self = shared_from_this()]() mutable {
            cleanup(a, std::move(done));
        };
        return;
    }
    const bool connected = session_->connected();
    if (!a->nodes.empty()) {
        session_->delete_owned_set(paths_of(*a), a->owner, connected ? std::move(done) : nullptr);
        if (!connected) done({});
        return;
    }
    if (!a->create_in_flight && !a->create_uncertain) return done({});
    // The transaction may have committed: the session finds our guid in each
    // directory and deletes what it finds.
    auto left = std::make_shared<std::size_t>(dirs_.size());
    auto shared_done = std::make_shared<std::function<void(std::error_code)>>(std::move(done));
    for (const auto& dir : dirs_)
        session_->delete_owned_by_guid(dir, a->guid, a->owner, [left, shared_done](std::error_code ec) {
            if (--*left == 0 && *shared_done) (*shared_done)(ec);
        });
    if (!connected) std::exchange(*shared_done, nullptr)({});
}

void set_contender::abandon(std::error_code ec) {
    if (phase_ != phase::acquiring) return;
    auto finish = stop_acquiring(ec);
    clear_nodes();
    auto a = std::exchange(attempt_, nullptr);
    if (!a) return finish({});
    a->abandoned = true;
    cleanup(a, within_session_timeout(*session_, std::move(finish), {}));
}

void set_contender::fail(std::error_code ec, std::string detail) {
    if (phase_ == phase::held) return lose(ec);
    if (phase_ == phase::acquiring && !detail.empty()) set_failure_detail(std::move(detail));
    abandon(ec);
}

void set_contender::do_release(std::function<void(std::error_code)> done) {
    if (phase_ != phase::held || !attempt_) {
        if (done) done(make_error_code(errc::not_held));
        return;
    }
    auto a = std::exchange(attempt_, nullptr);
    clear_nodes();
    done = end_by_release(std::move(done));
    // Lock-delay: every queue's clean-release record commits with the deletes.
    std::vector<multi_op> records;
    if (lock_delay_.count() > 0)
        for (std::size_t i = 0; i < dirs_.size(); ++i)
            if (auto data = release_record_data({}, a->before[i], a->nodes[i]))
                records.push_back(multi_op{multi_op::kind::set_data, dirs_[i], std::move(*data), 0, -1, nullptr});
    session_->delete_owned_set(paths_of(*a), a->owner, std::move(done), std::move(records));
}

void set_contender::lose(std::error_code ec) {
    if (phase_ != phase::held) return;
    auto a = std::exchange(attempt_, nullptr);
    auto next = end_hold();
    token_ = 0;
    {
        std::lock_guard lk(mutex_);
        stats_.total_hold += clock::now() - held_since_;
    }
    clear_nodes();
    // Our other nodes must not hold their queues: when the session lives on
    // (a node deleted by someone else, a suspension), they go; the transaction
    // fails on the node already gone and the session deletes the rest one by one.
    if (ec == errc::node_deleted || ec == errc::connection_suspended) session_->delete_owned_set(paths_of(*a), a->owner);
    report_loss(ec, std::move(next));
}

void set_contender::on_session_event(session_event e) {
    switch (e) {
    case session_event::expired:
        if (phase_ == phase::held) lose(make_error_code(errc::session_expired));
        else if (phase_ == phase::acquiring && attempt_) new_attempt();
        break;
    case session_event::suspended_too_long:
        if (phase_ == phase::held && session_->options().lose_locks_on_suspension)
            lose(make_error_code(errc::connection_suspended));
        break;
    case session_event::closed:
        if (phase_ == phase::held) lose(make_error_code(errc::session_closed));
        else if (phase_ == phase::acquiring) abandon(session_->close_reason());
        break;
    case session_event::reconnected:
        if (phase_ == phase::held && attempt_ && attempt_->node_gone) lose(make_error_code(errc::node_deleted));
        // A re-check of every queue we wait in covers a deletion the old connection never delivered.
        if (phase_ == phase::acquiring && attempt_ && attempt_->evaluated)
            for (std::size_t i = 0; i < dirs_.size(); ++i)
                if (!attempt_->first[i]) {
                    ++attempt_->generation[i];
                    list_queue(attempt_, i);
                }
        break;
    case session_event::connected:
    case session_event::suspended:
        break;
    }
}

} // namespace zklock::detail
