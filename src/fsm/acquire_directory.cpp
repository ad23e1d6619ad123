// The acquire machine's reads of the lock directory: a semaphore's permit
// count (read, claimed, compared), the directory's ACL against the policy,
// and lock-delay's reads (the directory before the create, the handover
// before a grant).
#include "fsm/acquire_machine.hpp"

#include "fsm/acl_check.hpp"
#include "fsm/dialect.hpp"
#include "fsm/reply_kind.hpp"
#include <zklock/error.hpp>

#include <zookeeper.h>

namespace zklock::detail {

using kind = acquire_action::kind;

std::string acquire_machine::foreign_semaphore(const std::string& peer) const {
    return setup_.dir + " is " + peer + ": zklock's Semaphore does not share a path with it (each would admit its own "
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
    rare().dir_error_detail = setup_.dir + " is a semaphore with " + data + ", not " + setup_.rule.dir_data;
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
        rare().dir_error_detail = "could not set the permit count of " + setup_.dir;
    }
    // The claim settled: a listing that came meanwhile decides now.
    claiming_ = false;
    if (!rare_ || !rare_->deferred_listing) return {};
    const auto children = std::move(*rare_->deferred_listing);
    rare_->deferred_listing.reset();
    return evaluate(ZOK, children);
}

acquire_actions acquire_machine::dir_acl_read(int rc, const acl_list& actual) {
    if (stage_ != stage::waiting) return {};
    if (rc == ZNOAUTH && !dir_error()) {
        rare().dir_error = make_error_code(errc::no_auth);
        rare().dir_error_detail = refused("read the ACL of", setup_.dir);
        return {};
    }
    if (rc != ZOK) return {};  // a missing directory is created with the policy
    if (const auto excess = first_excess(actual, words().expanded_acl); excess && !dir_error()) {
        rare().dir_error = make_error_code(errc::insecure_acl);
        rare().dir_error_detail = "the ACL of " + setup_.dir + " (" + to_string(actual) + ") grants " +
                                  to_string(*excess) + ", more than the ACL policy (" + words().acl_text +
                                  "): someone else created it; set its ACL (setAcl) or delete it";
    }
    return {};
}

acquire_actions acquire_machine::dir_before_read(int rc, std::string_view data, const node_stat& st) {
    if (stage_ == stage::waiting && delay_) delay_->before = directory_read(rc, data, st);
    return {};
}

// ---- lock-delay ----------------------------------------------------------------------

acquire_actions acquire_machine::handover_read(int rc, std::string_view data) {
    if (stage_ != stage::waiting || !delay_ || delay_->handover != handover_check::reading) return {};
    if (session_gone(rc)) return {};  // the session event decides
    handover h;
    if (delay_->ahead) h.ahead_before = delay_->ahead->to_vector();
    h.ahead_now = delay_->ahead_now.to_vector();
    if (rc == ZOK) h.now = split_release_marker(data);
    h.before = delay_->before;
    h.exclusive = !setup_.rule.read_write && setup_.rule.permits <= 1;
    if (rc == ZOK && clean_handover(h)) {
        delay_->handover = handover_check::done;
        return grant();
    }
    // A holder went without releasing (or we cannot tell): it may still be
    // acting, so wait lock_delay before telling anyone we hold.
    delay_->handover = handover_check::delaying;
    return actions_of(act(kind::start_delay));
}

} // namespace zklock::detail
