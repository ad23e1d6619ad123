#include "backends/etcd/etcd_backend.hpp"

#include <algorithm>
#include <random>
#include <utility>

namespace zklock::detail::etcd {

namespace {

constexpr std::chrono::milliseconds first_backoff{50}, max_backoff{1000};

// Reads the queue's first key (lowest create revision), or with `newest_below`
// the newest key created at or before that revision.
void range_queue(etcdserverpb::RangeRequest* r, const std::string& prefix, std::int64_t newest_below = 0) {
    r->set_key(prefix);
    r->set_range_end(prefix_range_end(prefix));
    r->set_limit(1);
    r->set_sort_target(etcdserverpb::RangeRequest::CREATE);
    if (newest_below > 0) {
        r->set_sort_order(etcdserverpb::RangeRequest::DESCEND);
        r->set_max_create_revision(newest_below);
    } else {
        r->set_sort_order(etcdserverpb::RangeRequest::ASCEND);
    }
}

} // namespace

void etcd_backend::start(std::uint64_t op, std::optional<clock_type::time_point> deadline, bool no_wait,
                         acquire_callback cb) {
    callback_ = std::move(cb);
    op_ = op;
    deadline_ = deadline;
    no_wait_ = no_wait;
    backoff_ = first_backoff;
    last_error_ = {};
    if (ctx_->closed) return finish(make_error_code(errc::session_closed), false);
    if (deadline_) {
        deadline_timer_.expires_at(*deadline_);
        deadline_timer_.async_wait([self = shared_from_this(), op](boost::system::error_code ec) {
            if (!ec && self->op_ == op) self->give_up(self->last_error_);
        });
    }
    attempt();
}

void etcd_backend::attempt() {
    attempt_pending_ = false;
    if (!callback_) return;
    // The key of an earlier acquire is being deleted: the Txn must not see it.
    if (txn_in_flight_ || delete_in_flight_) {
        attempt_pending_ = true;
        return;
    }
    counter_cells::bump(counters_.attempts);
    ensure_lease([self = shared_from_this(), op = op_](std::error_code ec) {
        if (!self->current(op)) return;
        if (ec) return self->step_failed(ec);
        self->send_txn();
    });
}

void etcd_backend::send_txn() {
    // etcd's Mutex: if our key does not exist, put it and read the first key;
    // else read our key and the first key.
    etcdserverpb::TxnRequest req;
    auto* cmp = req.add_compare();
    cmp->set_key(key_);
    cmp->set_target(etcdserverpb::Compare::CREATE);
    cmp->set_result(etcdserverpb::Compare::EQUAL);
    cmp->set_create_revision(0);
    auto* put = req.add_success()->mutable_request_put();
    put->set_key(key_);
    put->set_lease(lease_);
    range_queue(req.add_success()->mutable_request_range(), prefix_);
    req.add_failure()->mutable_request_range()->set_key(key_);
    range_queue(req.add_failure()->mutable_request_range(), prefix_);
    txn_in_flight_ = true;
    key_may_exist_ = true;
    ctx_->call(rpc::txn, std::move(req),
        [self = shared_from_this(), op = op_](std::error_code ec, etcdserverpb::TxnResponse& r) {
            self->txn_in_flight_ = false;
            self->txn_answered(op, ec, r);
        });
}

void etcd_backend::txn_answered(std::uint64_t op, std::error_code ec, const etcdserverpb::TxnResponse& r) {
    if (ec) {
        // It may have been applied: only revoking the lease surely removes the key.
        drop_lease();
        if (current(op)) step_failed(ec);
        else if (attempt_pending_) attempt();
        return;
    }
    if (!current(op)) {  // cancelled or timed out meanwhile
        remove_key();
        if (!delete_in_flight_ && attempt_pending_) attempt();
        return;
    }
    if (r.responses_size() != 2) return step_failed(make_error_code(errc::system_error));
    const auto& mine = r.responses(0);
    if (r.succeeded()) {
        my_revision_ = r.header().revision();
    } else if (mine.response_range().kvs_size() == 1) {
        my_revision_ = mine.response_range().kvs(0).create_revision();
    } else {
        return step_failed(make_error_code(errc::system_error));
    }
    std::optional<std::int64_t> first;
    if (r.responses(1).response_range().kvs_size() > 0) first = r.responses(1).response_range().kvs(0).create_revision();
    switch (next_after_txn(my_revision_, first, no_wait_)) {
    case after_txn::held: return grant();
    case after_txn::taken: return finish({}, false);  // finish deletes our key
    case after_txn::wait: return wait_step();
    }
}

void etcd_backend::wait_step() {
    // The newest key created before ours, and ours (gone: the lease ran out or
    // someone deleted it while we waited).
    etcdserverpb::TxnRequest req;
    range_queue(req.add_success()->mutable_request_range(), prefix_, my_revision_ - 1);
    auto* own = req.add_success()->mutable_request_range();
    own->set_key(key_);
    own->set_keys_only(true);
    ctx_->call(rpc::txn, std::move(req),
        [self = shared_from_this(), op = op_](std::error_code ec, etcdserverpb::TxnResponse& r) {
            self->wait_answered(op, ec, r);
        });
}

void etcd_backend::wait_answered(std::uint64_t op, std::error_code ec, const etcdserverpb::TxnResponse& r) {
    if (!current(op)) return;
    if (ec) return step_failed(ec);
    if (r.responses_size() != 2) return step_failed(make_error_code(errc::system_error));
    const auto& before = r.responses(0).response_range();
    const bool own_present = r.responses(1).response_range().kvs_size() > 0;
    switch (next_after_wait(before.kvs_size() > 0, own_present)) {
    case after_wait::held: return grant();
    case after_wait::key_gone:
        key_may_exist_ = false;
        return give_up(make_error_code(clock_.lost(clock_type::now()) ? errc::session_expired : errc::node_deleted));
    case after_wait::watch: break;
    }
    watch_id_ = ctx_->watch_delete(before.kvs(0).key(), r.header().revision() + 1,
                                   [self = shared_from_this(), op](watch_news news) {
                                       self->watch_id_ = 0;
                                       if (!self->current(op)) return;
                                       if (news == watch_news::deleted) counter_cells::bump(self->counters_.wakeups);
                                       self->wait_step();
                                   });
}

void etcd_backend::grant() {
    holding_ = true;
    fence_ = my_revision_;
    safe_until_ns_ = clock_.valid_until
                         ? std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.valid_until->time_since_epoch()).count()
                         : 0;
    counter_cells::bump(counters_.acquisitions);
    finish({}, true);
}

void etcd_backend::step_failed(std::error_code ec) {
    last_error_ = ec;
    const bool may_retry = deadline_ && !no_wait_ && !ctx_->closed && clock_type::now() < *deadline_;
    if (!may_retry) return finish(ec, false);
    // Leave the queue while the server cannot be used; come back after a backoff.
    remove_key();
    const auto cap = std::min(backoff_, max_backoff);
    backoff_ = std::min(backoff_ * 2, max_backoff);
    auto delay = clock_type::duration(ctx_->uniform(cap / 2, cap));
    delay = std::min(delay, std::max(clock_type::duration::zero(), *deadline_ - clock_type::now()));
    retry_timer_.expires_after(delay);
    retry_timer_.async_wait([self = shared_from_this(), op = op_](boost::system::error_code e) {
        if (!e && self->current(op)) {
            counter_cells::bump(self->counters_.timer_retries);
            self->attempt();
        }
    });
}

void etcd_backend::finish(std::error_code ec, bool acquired) {
    deadline_timer_.cancel();
    retry_timer_.cancel();
    if (watch_id_ != 0) {
        ctx_->unwatch(watch_id_);
        watch_id_ = 0;
    }
    if (!acquired) remove_key();
    op_ = 0;
    if (auto cb = std::exchange(callback_, nullptr)) {
        gate_.end(acquired);
        cb(ec, acquired);
    }
}

void etcd_backend::give_up(std::error_code ec) {
    if (callback_) finish(ec, false);
}

void etcd_backend::remove_key() {
    if (!key_may_exist_ || txn_in_flight_ || delete_in_flight_ || lease_ == 0) return;
    delete_in_flight_ = true;
    etcdserverpb::DeleteRangeRequest req;
    req.set_key(key_);
    ctx_->call(rpc::delete_range,
        std::move(req), [self = shared_from_this()](std::error_code ec, etcdserverpb::DeleteRangeResponse&) {
            self->delete_in_flight_ = false;
            if (ec) self->drop_lease();  // the lease takes the key with it
            else self->key_may_exist_ = false;
            if (self->attempt_pending_) self->attempt();
        });
}

} // namespace zklock::detail::etcd
