// The acquire machine's reads of the lock directories: a semaphore's permit
// count (read, claimed, compared; a semaphore is one queue), each directory's
// ACL against the policy, and lock-delay's reads (each directory before the
// create, every handover before a grant).
#include "fsm/acquire_machine.hpp"

#include "fsm/acl_check.hpp"
#include "fsm/dialect.hpp"
#include "fsm/reply_kind.hpp"
#include <zklock/error.hpp>

#include <zookeeper.h>

namespace zklock::detail {

using kind = acquire_action::kind;

std::string acquire_machine::foreign_semaphore(const std::string& peer) const {
    return dir(0) + " is " + peer + ": zklock's Semaphore does not share a path with it (each would admit its own "
           "permits); give the zklock semaphore another path";
}

acquire_actions acquire_machine::dir_data_read(int rc, std::string_view data, std::int32_t version) {
    if (stage_ != stage::waiting || rc != ZOK) return {};  // a missing directory is created with the data
    if (!split_release_marker(data).base.empty()) {
        compare_dir_data(data);
        return {};
    }
    // A directory made by someone that stores nothing: claim it. Another first
    // participant may claim it with another count at the same time, so no
    // listing decides until the claim settles.
    claiming_ = true;
    return actions_of(act(kind::claim_dir, {}, version));
}

void acquire_machine::compare_dir_data(std::string_view dir_data) {
    // Lock-delay's clean-release record, if any, is not part of the count.
    const auto data = split_release_marker(dir_data).base;
    if (data == setup_.rule.dir_data) return;
    if (const auto peer = foreign_semaphore_data(data)) {
        rare().dir_error = make_error_code(errc::foreign_recipe);
        rare().dir_error_detail = foreign_semaphore(*peer);
        return;
    }
    rare().dir_error = make_error_code(errc::permits_mismatch);
    rare().dir_error_detail = dir(0) + " is a semaphore with " + data + ", not " + setup_.rule.dir_data;
}

acquire_actions acquire_machine::dir_claimed(int rc) {
    if (stage_ != stage::waiting) return {};
    // Lost the race (or do not know): what the directory holds now decides.
    if (rc != ZOK) return actions_of(act(kind::reread_dir_data));
    return dir_data_reread(ZOK, setup_.rule.dir_data);
}

acquire_actions acquire_machine::dir_data_reread(int rc, std::string_view data) {
    if (stage_ != stage::waiting) return {};
    if (rc == ZOK && !data.empty()) {
        compare_dir_data(data);
    } else if (rc != ZNONODE && !dir_error()) {
        rare().dir_error = rc == ZOK ? make_error_code(errc::connection_loss) : from_zookeeper(rc);
        rare().dir_error_detail = "could not set the permit count of " + dir(0);
    }
    // The claim settled: a listing that came meanwhile decides now.
    claiming_ = false;
    if (!rare_ || !rare_->deferred_listing) return {};
    const auto children = std::move(*rare_->deferred_listing);
    rare_->deferred_listing.reset();
    return evaluate(0, ZOK, children);
}

acquire_actions acquire_machine::dir_acl_read(std::size_t queue, int rc, const acl_list& actual) {
    if (stage_ != stage::waiting) return {};
    if (rc == ZNOAUTH && !dir_error()) {
        rare().dir_error = make_error_code(errc::no_auth);
        rare().dir_error_detail = refused("read the ACL of", dir(queue));
        return {};
    }
    if (rc != ZOK) return {};  // a missing directory is created with the policy
    if (const auto excess = first_excess(actual, words().expanded_acl); excess && !dir_error()) {
        rare().dir_error = make_error_code(errc::insecure_acl);
        rare().dir_error_detail = "the ACL of " + dir(queue) + " (" + to_string(actual) + ") grants " +
                                  to_string(*excess) + ", more than the ACL policy (" + words().acl_text +
                                  "): someone else created it; set its ACL (setAcl) or delete it";
    }
    return {};
}

acquire_actions acquire_machine::dir_before_read(std::size_t queue, int rc, std::string_view data,
                                                 const node_stat& st) {
    if (stage_ == stage::waiting && queue < delay_.size()) delay_[queue].before = directory_read(rc, data, st);
    return {};
}

// ---- lock-delay ----------------------------------------------------------------------

acquire_actions acquire_machine::handover_read(std::size_t queue, int rc, std::string_view data, const node_stat& st) {
    if (stage_ != stage::waiting || queue >= delay_.size() || handover_ != handover_check::reading ||
        gathering_ != gathering::handover)
        return {};
    const auto& d = delay_[queue];
    handover h;
    if (d.ahead) h.ahead_before = d.ahead->to_vector();
    h.ahead_now = d.ahead_now.to_vector();
    if (rc == ZOK) {
        h.now = split_release_marker(data);
        h.checked = child_counters{st.cversion, st.num_children};
    }
    h.before = d.before;
    h.exclusive = !setup_.rule.read_write && setup_.rule.permits <= 1;
    handover_session_gone_ = handover_session_gone_ || session_gone(rc);
    handover_clean_ = handover_clean_ && rc == ZOK && clean_handover(h);
    if (!gathered(gathering::handover)) return {};
    if (handover_session_gone_) return {};  // the session event decides
    if (handover_clean_) {
        handover_ = handover_check::done;
        return grant();
    }
    // A holder went without releasing (or we cannot tell): it may still be
    // acting, so wait lock_delay before telling anyone we hold.
    handover_ = handover_check::delaying;
    return actions_of(act(kind::start_delay));
}

} // namespace zklock::detail
