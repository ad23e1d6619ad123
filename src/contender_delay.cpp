// Lock-delay in the queue engine (detail/lock_delay.hpp decides): the
// directory read before the create, the queue each listing showed ahead of us,
// the check before a grant (and the wait after a loss), and the clean-release
// record committed with a release's delete.
#include "contender.hpp"

#include <zklock/detail/reply_kind.hpp>

namespace zklock::detail {

void contender_engine::read_dir_before(const std::shared_ptr<attempt>& a) {
    auto self = shared_from_this();
    session_->get_data(dir_, {}, [self, a](int rc, std::string data, const node_stat& st) {
        if (!self->current(a)) return;
        if (rc == ZNONODE) a->before = directory_before{};
        if (rc != ZOK) return;  // not read: a grant at the first listing counts as after a loss
        a->before = directory_before{true, st.num_children, st.cversion, st.pzxid, st.mzxid, split_release_marker(data)};
    });
}

void contender_engine::note_listing(const std::shared_ptr<attempt>& a, const std::vector<std::string>& children,
                                    const queue_decision& d) {
    const auto sorted = sorted_contenders(children);
    a->ahead_now.clear();
    for (std::size_t i = 0; i < d.position && i < sorted.size(); ++i) a->ahead_now.push_back(sorted[i].sequence);
    if (!d.acquired) a->ahead = a->ahead_now;
}

void contender_engine::note_wake(const std::shared_ptr<attempt>& a, const std::string& name) {
    // Granted by one deletion, without a listing: the rest is still ahead.
    a->ahead_now = a->ahead.value_or(std::vector<std::int32_t>{});
    if (const auto seq = recognise(name)) std::erase(a->ahead_now, seq->sequence);
}

bool contender_engine::hold_back(const std::shared_ptr<attempt>& a) {
    if (rule_.lock_delay.count() <= 0 || a->handover_checked) return false;
    a->handover_checked = true;
    auto self = shared_from_this();
    // How the lock came to us: the directory's record of the last clean release.
    session_->get_data(dir_, {}, [self, a](int rc, std::string data, const node_stat&) {
        if (!self->current(a) || self->phase_ != phase::acquiring) return;
        if (session_gone(rc)) return;  // the session event decides
        handover h;
        h.ahead_before = a->ahead;
        h.ahead_now = a->ahead_now;
        if (rc == ZOK) h.now = split_release_marker(data);
        h.before = a->before;
        h.exclusive = !self->rule_.read_write && self->rule_.permits <= 1;
        if (rc == ZOK && clean_handover(h)) return self->grant(a);
        // A holder went without releasing (or we cannot tell): it may still be
        // acting, so wait lock_delay before telling anyone we hold.
        a->delay_timer = std::make_shared<boost::asio::steady_timer>(self->session_->strand());
        a->delay_timer->expires_after(self->rule_.lock_delay);
        a->delay_timer->async_wait([weak = self->weak_from_this(), a](boost::system::error_code ec) {
            auto s = weak.lock();
            if (!ec && s && s->current(a)) s->grant(a);
        });
    });
    return true;
}

std::vector<multi_op> contender_engine::release_record(const attempt& a) const {
    if (rule_.lock_delay.count() <= 0 || !a.before) return {};
    const auto seq = recognise(a.node);
    if (!seq) return {};
    // Whatever the directory held stays (a semaphore's permit count).
    const auto base = rule_.dir_data.empty() ? a.before->data.base : rule_.dir_data;
    return {multi_op{multi_op::kind::set_data, dir_, with_release_marker(base, seq->sequence), 0, -1, nullptr}};
}

} // namespace zklock::detail
