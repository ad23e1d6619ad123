#include "engine/release_txn.hpp"

#include "fsm/release_proof.hpp"

#include <zookeeper.h>

#include <utility>

namespace zklock::detail {

std::vector<multi_op> release_ops(const std::vector<std::string>& paths, bool mark,
                                  const std::shared_ptr<const c_acl>& proof, const std::vector<multi_op>& extra,
                                  std::vector<release_role>* roles) {
    std::vector<multi_op> ops;
    const auto add = [&](multi_op op, release_role r) {
        ops.push_back(std::move(op));
        if (roles) roles->push_back(r);
    };
    for (const auto& p : paths) {
        if (proof) {
            // The `.released` sibling, created and deleted first: its successor's
            // exists watch fires before the data watch the mark fires.
            const auto sibling = release_proof_path(p);
            add({multi_op::kind::create, sibling, {}, ZOO_EPHEMERAL, -1, proof}, release_role::proof);
            add({multi_op::kind::remove, sibling, {}, 0, -1, nullptr}, release_role::proof);
        }
        if (mark) add({multi_op::kind::set_data, p, {}, 0, -1, nullptr}, release_role::mark);
        add({multi_op::kind::remove, p, {}, 0, -1, nullptr}, release_role::remove);
    }
    for (const auto& op : extra) add(op, release_role::extra);
    return ops;
}

void release_owned(session_impl& session, std::vector<std::string> paths, std::int64_t owner,
                   std::function<void(std::error_code)> fn, std::vector<multi_op> extra, bool mark,
                   std::shared_ptr<const c_acl> proof) {
    // What the next send holds: a refusal takes the proof or the mark out.
    struct release {
        std::vector<std::string> paths;
        std::vector<multi_op> extra;
        bool mark;
        std::shared_ptr<const c_acl> proof;
        std::vector<release_role> roles;
    };
    auto r = std::make_shared<release>(release{paths, std::move(extra), mark, mark ? std::move(proof) : nullptr, {}});
    owned_txn txn;
    txn.nodes = std::move(paths);
    txn.ops = [r] {
        r->roles.clear();
        return release_ops(r->paths, r->mark, r->proof, r->extra, &r->roles);
    };
    txn.judge = [r](int rc, const std::vector<int>& errors) {
        switch (retry_after_refusal(find_refused_op(errors, r->roles).role, rc)) {
        case release_retry::without_proof: r->proof = nullptr; return owned_txn::verdict::send_again;
        case release_retry::without_mark: r->mark = false; return owned_txn::verdict::send_again;
        case release_retry::no: break;
        }
        // A node gone already: a set with one missing is no longer held by anyone.
        return rc == ZNONODE ? owned_txn::verdict::delete_each : owned_txn::verdict::finish;
    };
    session.delete_owned_txn(std::move(txn), owner, std::move(fn));
}

} // namespace zklock::detail
