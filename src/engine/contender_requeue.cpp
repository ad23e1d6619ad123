// The requeue of a queue engine (QueueLock::requeue): the held node's release
// and the next node's create in one multi, then the wait for the grant as
// lock() waits. The release is the machine's own (as unlock() sends it: the
// mark, the `.released` proof, lock-delay's record); the engine keeps it to go
// in front of the create the next attempt's machine asks for.
#include "engine/contender.hpp"
#include "engine/release_txn.hpp"

#include "fsm/reply_kind.hpp"
#include <zklock/error.hpp>

#include <zookeeper.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zklock::detail {
namespace asio = boost::asio;

void contender_engine::requeue(std::optional<clock::time_point> deadline, bool no_wait, asio::cancellation_slot slot,
                               acquire_callback callback) {
    if (session_->state() == session_state::closed) {
        callback(make_error_code(errc::session_closed), false);
        return;
    }
    // As release(): is_held() is false from here on, and only one of a
    // release, a revocation's let-go and this ends the hold.
    if (!held_.exchange(false)) {
        callback(make_error_code(errc::not_held), false);
        return;
    }
    token_ = 0;
    const auto id = new_acquire_id(slot);  // busy_ stays set: the place goes on
    session_->post([self = shared_from_this(), id, deadline, no_wait, cb = std::move(callback)]() mutable {
        self->do_requeue(deadline, no_wait, id, std::move(cb));
    });
}

void contender_engine::do_requeue(std::optional<clock::time_point> deadline, bool no_wait, std::uint64_t id,
                                  acquire_callback callback) {
    if (phase_ != phase::held || !attempt_) return callback(make_error_code(errc::not_held), false);
    if (hold_ending()) {
        // The held node went after the call (deleted, or the session lost)
        // and why is not known yet: nothing to release. The requeue completes
        // with the loss's reason once it is reported to every listener
        // (report_loss), as a lock() made now would start then.
        if (deferred_start_) return callback(make_error_code(errc::node_deleted), false);
        deferred_start_ = std::make_unique<deferred_start>(deferred_start{id, deadline, no_wait, std::move(callback)});
        deferred_start_->loss_only = true;
        return;
    }
    acquire_id_ = id;
    auto held = std::exchange(attempt_, nullptr);
    set_position(-1);
    forget_nodes();
    // The machine releases as unlock() does (the mark, the proof, lock-delay's
    // record); its delete is kept to go in the next attempt's create.
    requeue_ = std::make_unique<pending_requeue>();
    capturing_release_ = true;
    feed(held, [](acquire_machine& m) { return m.release(); });
    capturing_release_ = false;
    if (!requeue_->held) {  // nothing to delete (cannot happen while held): queue as lock() does
        requeue_.reset();
    }
    end_by_release(nullptr);  // the "released" event; the loss waiters told {}
    start(deadline, no_wait, std::move(callback));  // new_attempt(): its create joins the release
}

void contender_engine::send_requeue(const std::shared_ptr<attempt>& a, const acquire_action& create) {
    auto& r = *requeue_;
    r.in_flight = true;
    r.listing_sent = false;
    const auto& release = r.release;
    std::vector<multi_op> extra;
    for (const auto& [dir, data] : release.records)
        extra.push_back(multi_op{multi_op::kind::set_data, dir, data, 0, -1, nullptr});
    // A set_data of the transaction (the mark, lock-delay's record) returns a
    // Stat whose mzxid is the transaction's zxid: the new node's czxid, its
    // fencing token. With one, the turn is one round trip (the multi and the
    // listing behind it); without (a permit, a reader: no mark), the node's
    // Stat is read once the multi applied. Under the mutex rule the requeue
    // marks even a release that would not (nobody queued behind it when it
    // was granted): a waiter that came later reads a mark as a release.
    const bool mark = (release.mark || setup_.mark_release) && r.mark;
    std::vector<release_role> roles;
    auto ops = release_ops({path_of(release.name)}, mark, mark && release.mark && r.proof ? acl_ : nullptr, extra,
                           &roles);
    const auto stat_op = std::find_if(ops.begin(), ops.end(),
                                      [](const multi_op& op) { return op.type == multi_op::kind::set_data; });
    const auto token_at = stat_op == ops.end() ? std::optional<std::size_t>()
                                               : std::optional(static_cast<std::size_t>(stat_op - ops.begin()));
    r.token_in_reply = token_at.has_value();
    // Last: its sequence number is assigned after every node already queued.
    ops.push_back(
        multi_op{multi_op::kind::create, path_of(create.name), *node_data_, ZOO_EPHEMERAL_SEQUENTIAL, -1, acl_});
    roles.push_back(release_role::extra);
    session_->multi_with_stats(
        std::move(ops), [self = shared_from_this(), a, create, roles, token_at](
                            int rc, std::vector<int> errors, std::vector<std::string> created,
                            std::vector<node_stat> stats) {
            const auto zxid = rc == ZOK && token_at && *token_at < stats.size() && stats[*token_at].mzxid > 0
                                  ? std::optional(stats[*token_at].mzxid)
                                  : std::nullopt;
            self->requeue_answered(a, create, rc, errors, roles, created.empty() ? std::string() : created.back(),
                                   zxid);
        });
    // A multi sent again (refused in part, the first time) takes the listing
    // the machine asked for with it the first time.
    if (r.listing && r.token_in_reply) {
        const auto listing = *r.listing;  // a copy: list_behind_requeue() assigns r.listing
        list_behind_requeue(a, listing);
    }
}

void contender_engine::list_behind_requeue(const std::shared_ptr<attempt>& a, const acquire_action& action) {
    auto& r = *requeue_;
    r.listing = action;  // kept: a multi refused and sent again needs its listing again
    if (!r.token_in_reply) return;  // sent once the node's Stat is read (requeue_answered)
    // Pipelined as lock()'s is behind its create: the server answers the
    // multi first, so the machine knows its node when the listing comes. When
    // the multi fails, the machine ignores this listing (no node yet).
    r.listing_sent = true;
    list_now(a, action);
}

void contender_engine::requeue_answered(const std::shared_ptr<attempt>& a, const acquire_action& create, int rc,
                                        const std::vector<int>& errors, const std::vector<release_role>& roles,
                                        std::string name, std::optional<std::int64_t> zxid) {
    auto created = [&](int code, const std::string& path, const node_stat& st) {
        feed(a, [&](acquire_machine& m) { return m.created(code, path, st); });
    };
    // The new node's Stat as the machine needs it: its czxid, its owner (the
    // session that committed the multi, whose reply this is).
    node_stat st;
    if (zxid) {
        st.czxid = *zxid;
        st.ephemeral_owner = session_->session_id();
    }
    if (!requeue_for(a)) return created(rc, name, st);
    auto& r = *requeue_;
    r.in_flight = false;
    const bool current = attempt_ == a;
    if (rc == ZOK) {
        // Both applied: the hold is released, the node queued behind every waiter.
        auto listing = std::move(r.listing);
        const bool listing_sent = r.listing_sent;
        requeue_.reset();
        if (!current || zxid) {
            // The token in the reply (the listing is behind the multi), or
            // cancelled meanwhile (the machine deletes the node).
            created(rc, name, st);
            if (current && listing && !listing_sent) list_now(a, *listing);
            return;
        }
        // No Stat in the reply: a read of the node has it (as the recovery
        // of a lost create reads it), and the pipelined listing follows it.
        session_->get_data(name, {}, [self = shared_from_this(), a, name](int code, std::string, const node_stat& st) {
            self->requeued_node_read(a, name, code, st);
        });
        if (listing) list_now(a, *listing);
        return;
    }
    if (connection_trouble(rc)) {
        // Unknown outcome. The machine finds its node by the new guid (the
        // multi applied: queued), or creates it again, which sends this multi
        // again (it did not: the held node is still there, or the multi fails
        // on its delete when the node went meanwhile).
        if (!current) {
            release_instead(r);
            requeue_.reset();
        }
        return created(rc, {}, {});
    }
    // Refused as a whole: nothing applied.
    const auto [at, role] = find_refused_op(errors, roles);
    if (current) {
        switch (retry_after_refusal(role, rc)) {
        case release_retry::without_proof:
            r.proof = false;  // the sibling refused (it exists, the ACL): without it, as a release does
            return send_requeue(a, create);
        case release_retry::without_mark:
            r.mark = false;  // the node's ACL refuses the mark: its successor lists instead
            r.release.mark = false;
            return send_requeue(a, create);
        case release_retry::no: break;
        }
    }
    // The held node gone: its delete fails, or before it the mark's write.
    const bool held_gone = rc == ZNONODE && (role == release_role::remove || role == release_role::mark);
    const auto dropped = std::move(requeue_);
    if (!held_gone) release_instead(*dropped);  // still there: released as unlock() releases it
    // The new node's create refused (the directory's ACL, say): the machine
    // answers it as it answers lock()'s create, and says why.
    const bool create_refused = at + 1 == errors.size();
    if (current && held_gone)
        fail(make_error_code(errc::node_deleted),
             "the held node " + path_of(dropped->release.name) + " was gone before the requeue applied");
    else if (current && !create_refused)
        fail(from_zookeeper(rc), "the server refused the requeue's transaction: " + from_zookeeper(rc).message());
    created(rc, {}, {});
}

void contender_engine::requeued_node_read(const std::shared_ptr<attempt>& a, const std::string& name, int rc,
                                          const node_stat& st) {
    // Lost with the connection or the session: the machine finds the node
    // by its guid, or queues on the new session.
    if (connection_trouble(rc) || session_gone(rc)) return feed(a, [&](acquire_machine& m) { return m.created(rc, name, st); });
    if (rc == ZNONODE) {
        // Deleted by someone else since the multi: the listing behind this
        // read does not find it, and the machine queues again.
        node_stat gone;
        gone.ephemeral_owner = session_->session_id();
        return feed(a, [&](acquire_machine& m) { return m.created(ZOK, name, gone); });
    }
    if (rc == ZOK) return feed(a, [&](acquire_machine& m) { return m.created(ZOK, name, st); });
    // No token to grant with (the node's ACL refuses our read): the attempt
    // fails, and its machine, told the node first, deletes it.
    feed(a, [&](acquire_machine& m) { return m.created(ZOK, name, st); });
    if (attempt_ == a)
        fail(from_zookeeper(rc), "the Stat (fencing token) of the requeued node " + name + " could not be read");
}

void contender_engine::release_instead(pending_requeue& r) {
    if (!r.held) return;
    auto held = std::move(r.held);
    send_delete(held, r.release);
}

void contender_engine::drop_requeue() {
    if (!requeue_ || requeue_->in_flight) return;  // the multi's answer decides
    release_instead(*requeue_);
    requeue_.reset();
}

} // namespace zklock::detail
