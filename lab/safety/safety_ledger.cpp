#include "safety/safety_ledger.hpp"

#include <zklock/fencing.hpp>

#include <algorithm>

namespace zklock::lab {

std::string safety_summary::line() const {
    return "grants=" + std::to_string(grants) + " accepted=" + std::to_string(accepted) +
           " refused=" + std::to_string(refused) + " overlaps=" + std::to_string(overlaps) +
           " stale_unfenced=" + std::to_string(stale_accepted_unfenced) +
           " duplicate_tokens=" + std::to_string(duplicate_tokens) +
           " longest_gap_ms=" + std::to_string(longest_gap.count());
}

SafetyLedger::SafetyLedger(std::size_t permits) : permits_(permits == 0 ? 1 : permits) {}

SafetyLedger::section_id SafetyLedger::enter(std::string_view client, std::int64_t token, clock::time_point at) {
    std::lock_guard lk(mutex_);
    std::vector<section_id> open_others;
    for (section_id i = 0; i < sections_.size(); ++i)
        if (sections_[i].open && sections_[i].client != client) open_others.push_back(i);
    section s;
    s.client = std::string(client);
    s.token = token;
    s.entered = at;
    if (open_others.size() >= permits_) {
        ++counts_.overlaps;
        s.overlapped = std::move(open_others);  // judged in summary(), once every loss is known
    }
    ++counts_.grants;
    if (last_grant_ && at - *last_grant_ > longest_gap_) longest_gap_ = at - *last_grant_;
    last_grant_ = at;
    sections_.push_back(std::move(s));
    return sections_.size() - 1;
}

bool SafetyLedger::write(section_id id, clock::time_point) {
    std::lock_guard lk(mutex_);
    const auto& s = sections_.at(id);
    ++counts_.writes;
    // The unfenced copy takes every write; one older than a write it already
    // took is the stale write fencing exists for.
    if (unfenced_newest_ && s.token < *unfenced_newest_) ++counts_.stale_accepted_unfenced;
    if (!unfenced_newest_ || s.token > *unfenced_newest_) unfenced_newest_ = s.token;

    const auto verdict = fence_decide(s.token, fenced_token_);
    if (!verdict.applied) {
        ++counts_.refused;
        return false;
    }
    // Equal tokens are admitted so one section may write twice; from another
    // section it means two grants carried one token.
    if (fenced_token_ && s.token == *fenced_token_ && fenced_writer_ != id) ++counts_.duplicate_tokens;
    // What the rule forbids, counted in case the rule above is not the one applied.
    if (fenced_token_ && s.token < *fenced_token_) ++counts_.out_of_order_accepts;
    if (fenced_writer_ && *fenced_writer_ != id && s.wrote) ++counts_.interleaved_accepts;
    sections_.at(id).wrote = true;
    ++counts_.accepted;
    fenced_token_ = s.token;
    fenced_writer_ = id;
    accepted_tokens_.push_back(s.token);
    return true;
}

void SafetyLedger::leave(section_id id, clock::time_point) {
    std::lock_guard lk(mutex_);
    sections_.at(id).open = false;
}

void SafetyLedger::budget(section_id id, clock::time_point safe_until, std::int64_t session) {
    std::lock_guard lk(mutex_);
    auto& s = sections_.at(id);
    for (const auto& [client, sid] : forced_)
        if (client == s.client && sid == session) return;
    s.session = session;
    if (!s.safe_until || safe_until > *s.safe_until) s.safe_until = safe_until;
}

void SafetyLedger::held_on(section_id id, std::int64_t session) {
    std::lock_guard lk(mutex_);
    sections_.at(id).session = session;
}

void SafetyLedger::forced_end(std::string_view client, std::int64_t session) {
    std::lock_guard lk(mutex_);
    for (auto& s : sections_)
        if (s.client == client && s.session == session) s.safe_until.reset();
    forced_.emplace_back(std::string(client), session);
}

void SafetyLedger::lost(section_id id, clock::time_point) {
    std::lock_guard lk(mutex_);
    auto& s = sections_.at(id);
    s.open = false;
    s.lost = true;
}

safety_summary SafetyLedger::summary() const {
    std::lock_guard lk(mutex_);
    auto out = counts_;
    out.longest_gap = std::chrono::duration_cast<std::chrono::milliseconds>(longest_gap_);
    for (const auto& s : sections_) {
        if (s.open) ++out.open_sections;
        if (s.lost) ++out.lost;
        if (s.safe_until) ++out.budgeted;
        std::size_t certain = 0;  // other open sections whose budget covered this one's start
        for (const auto o : s.overlapped)
            if (sections_[o].safe_until && *sections_[o].safe_until > s.entered) ++certain;
        const bool on_forced = std::any_of(forced_.begin(), forced_.end(), [&](const auto& f) {
            return f.first == s.client && f.second == s.session && s.session != 0;
        });
        if (certain >= permits_ && !on_forced) ++out.overlaps_inside_budget;
        if (s.overlapped.empty()) continue;
        // The lock allows `permits` real holders at once; the others must have
        // been told they lost it (the new one included: granted on a session
        // that was already gone).
        std::size_t real = s.lost ? 0 : 1;
        for (const auto o : s.overlapped)
            if (!sections_[o].lost) ++real;
        if (real > permits_) ++out.unexplained_overlaps;
    }
    return out;
}

std::optional<std::int64_t> SafetyLedger::fenced_token() const {
    std::lock_guard lk(mutex_);
    return fenced_token_;
}

std::vector<std::int64_t> SafetyLedger::accepted_tokens() const {
    std::lock_guard lk(mutex_);
    return accepted_tokens_;
}

} // namespace zklock::lab
