#include <zklock/testing/safety_ledger.hpp>

#include <zklock/fencing.hpp>

namespace zklock::testing {

std::string safety_summary::line() const {
    return "grants=" + std::to_string(grants) + " accepted=" + std::to_string(accepted) +
           " refused=" + std::to_string(refused) + " overlaps=" + std::to_string(overlaps) +
           " stale_unfenced=" + std::to_string(stale_accepted_unfenced) +
           " duplicate_tokens=" + std::to_string(duplicate_tokens) +
           " longest_gap_ms=" + std::to_string(longest_gap.count());
}

SafetyLedger::section_id SafetyLedger::enter(std::string_view client, std::int64_t token, clock::time_point at) {
    std::lock_guard lk(mutex_);
    for (const auto& s : sections_)
        if (s.open && s.client != client) {
            ++counts_.overlaps;
            break;
        }
    ++counts_.grants;
    if (last_grant_ && at - *last_grant_ > longest_gap_) longest_gap_ = at - *last_grant_;
    last_grant_ = at;
    sections_.push_back({std::string(client), token, true});
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

safety_summary SafetyLedger::summary() const {
    std::lock_guard lk(mutex_);
    auto out = counts_;
    out.longest_gap = std::chrono::duration_cast<std::chrono::milliseconds>(longest_gap_);
    for (const auto& s : sections_)
        if (s.open) ++out.open_sections;
    return out;
}

std::vector<std::int64_t> SafetyLedger::accepted_tokens() const {
    std::lock_guard lk(mutex_);
    return accepted_tokens_;
}

} // namespace zklock::testing
