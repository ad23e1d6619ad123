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
        if (self->current(a)) a->before = directory_read(rc, data, st);
    });
}

void contender_engine::note_listing(const std::shared_ptr<attempt>& a, const std::vector<std::string>& children,
                                    const queue_decision& d) {
    a->ahead_now = sequences_ahead(children, a->node);
    if (!d.acquired) a->ahead = a->ahead_now;
}

void contender_engine::note_wake(const std::shared_ptr<attempt>& a, const std::string& name) {
    a->ahead_now = without(a->ahead.value_or(std::vector<std::int32_t>{}), name);
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
    if (rule_.lock_delay.count() <= 0) return {};
    if (auto op = release_record_op(dir_, rule_.dir_data, a.before, a.node)) return {std::move(*op)};
    return {};
}

std::optional<directory_before> directory_read(int rc, const std::string& data, const node_stat& st) {
    if (rc == ZNONODE) return directory_before{};
    if (rc != ZOK) return std::nullopt;  // not read: a grant at the first listing counts as after a loss
    return directory_before{true, st.num_children, st.cversion, st.pzxid, st.mzxid, split_release_marker(data)};
}

std::optional<multi_op> release_record_op(const std::string& dir, const std::string& rule_data,
                                          const std::optional<directory_before>& before, const std::string& node) {
    const auto seq = recognise(node);
    if (!before || !seq) return std::nullopt;
    // Whatever the directory held stays (a semaphore's permit count).
    const auto base = rule_data.empty() ? before->data.base : rule_data;
    return multi_op{multi_op::kind::set_data, dir, with_release_marker(base, seq->sequence), 0, -1, nullptr};
}

} // namespace zklock::detail
