#include "backends/redis/redlock.hpp"

#include <zklock/error.hpp>

#include <algorithm>

namespace zklock::detail::redlock {
namespace {

/// The server refused who we are or the db we asked for (a connection's AUTH or
/// SELECT, sent before any lock command): retrying the same cannot help.
bool refused_credentials(const std::error_code& ec) noexcept {
    return ec == errc::auth_failed || ec == errc::no_auth || ec == errc::invalid_argument;
}

} // namespace

std::size_t quorum(std::size_t masters) noexcept { return masters / 2 + 1; }

std::chrono::milliseconds drift(std::chrono::milliseconds ttl) noexcept {
    return std::chrono::milliseconds(ttl.count() / 100 + 2);
}

duration validity(std::chrono::milliseconds ttl, duration elapsed, std::chrono::milliseconds drift) noexcept {
    return ttl - elapsed - drift;
}

bool may_have_run(const master_reply& reply) noexcept {
    switch (reply.k) {
    case master_reply::kind::yes: return true;
    case master_reply::kind::no: return false;
    case master_reply::kind::failed: break;
    }
    return reply.error != std::errc::connection_refused && reply.error != errc::session_closed &&
           reply.error != errc::timeout && !refused_credentials(reply.error);
}

round_tally tally(const std::vector<master_reply>& replies) {
    round_tally t;
    for (const auto& r : replies) {
        switch (r.k) {
        case master_reply::kind::yes:
            ++t.yes;
            t.fence = std::max(t.fence, r.value);
            break;
        case master_reply::kind::no: ++t.no; break;
        case master_reply::kind::failed:
            ++t.failed;
            if (!t.first_error || (refused_credentials(r.error) && !refused_credentials(t.first_error)))
                t.first_error = r.error;
            break;
        }
        t.undo = t.undo || may_have_run(r);
    }
    return t;
}

bool won(const round_tally& t, std::size_t quorum, duration validity) noexcept {
    return t.yes >= quorum && validity > duration::zero();
}

after_round next_step(const round_tally& t, std::size_t quorum, bool no_wait, bool has_deadline, bool deadline_passed,
                      bool service_closed) noexcept {
    if (t.no == 0 && t.yes < quorum && t.failed > 0)  // the servers, not a holder, refused
        return no_wait || !has_deadline || service_closed || refused_credentials(t.first_error) ? after_round::fail
                                                                                                : after_round::retry_on_error;
    if (no_wait || deadline_passed) return after_round::give_up;
    return t.yes > 0 ? after_round::retry_split_vote : after_round::wait;
}

std::error_code after_release(const std::vector<master_reply>& replies) {
    std::error_code first_error;
    bool deleted = false, answered = false;
    for (const auto& r : replies) {
        if (r.k == master_reply::kind::yes) deleted = true;
        if (r.k != master_reply::kind::failed) answered = true;
        else if (!first_error) first_error = r.error;
    }
    if (deleted) return {};
    return answered ? make_error_code(errc::node_deleted) : first_error;
}

renewal after_renewal(const std::vector<master_reply>& replies, std::size_t quorum) noexcept {
    std::size_t yes = 0, no = 0;
    for (const auto& r : replies) {
        if (r.k == master_reply::kind::yes) ++yes;
        else if (r.k == master_reply::kind::no) ++no;
    }
    if (yes >= quorum) return renewal::extended;
    if (no > replies.size() - quorum) return renewal::lost;
    return renewal::retry_sooner;
}

} // namespace zklock::detail::redlock
