#include "safety/tally.hpp"

#include "safety/plan.hpp"

namespace zklock::cli::safety {
namespace {

std::chrono::milliseconds ms(clock_type::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

nlohmann::json optional_ms(const std::optional<std::chrono::milliseconds>& d) {
    return d ? nlohmann::json(d->count()) : nlohmann::json(nullptr);
}

}  // namespace

void grant_order_judge::write(std::size_t section, bool fenced_accepted) {
    if (newest_writer_ && *newest_writer_ > section) {
        ++stale;
        if (fenced_accepted) ++stale_accepted_fenced;
        return;
    }
    newest_writer_ = section;
    if (!fenced_accepted) ++current_refused;
}

run_tally tally(const std::vector<section_record>& sections, const fault_window& fault) {
    run_tally t;
    for (const auto& s : sections) {
        const bool told = !s.lost_reason.empty() || (s.release_error && s.release_error->starts_with("lost"));
        if (told) ++t.lost_reported;
        else if (s.overtaken && !s.holder_killed) ++t.lost_unreported;
        // A grant at the very moment the fault started is not one after it.
        if (s.entered > fault.start && (!t.next_grant_after_start || ms(s.entered - fault.start) < *t.next_grant_after_start))
            t.next_grant_after_start = ms(s.entered - fault.start);
        if (s.entered >= fault.end) {
            ++t.grants_after_fault;
            if (!t.recovery || ms(s.entered - fault.end) < *t.recovery) t.recovery = ms(s.entered - fault.end);
        }
    }
    return t;
}

nlohmann::json incidents(const std::vector<section_record>& sections, const fault_window& fault) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : sections) {
        const bool told = !s.lost_reason.empty() || (s.release_error && s.release_error->starts_with("lost"));
        if (!s.overtaken && !told && !s.holder_killed) continue;
        nlohmann::json i = {{"client", s.client},
                            {"token", s.token},
                            {"entered_ms", ms(s.entered - fault.start).count()},
                            {"left_ms", s.left ? nlohmann::json(ms(*s.left - fault.start).count()) : nlohmann::json(nullptr)},
                            {"overtaken", s.overtaken}};
        if (!s.lost_reason.empty()) i["told"] = s.lost_reason;
        if (s.release_error && !s.release_error->empty()) i["release"] = *s.release_error;
        if (s.holder_killed) i["killed"] = true;
        out.push_back(std::move(i));
    }
    return out;
}

nlohmann::json make_row(const std::string& backend, const std::string& fault, const lab::safety_summary& ledger,
                        const grant_order_judge& writes, const run_tally& t, const nlohmann::json& extra) {
    nlohmann::json row = {{"backend", backend},
                          {"fault", fault},
                          {"status", "ran"},
                          {"anti_example", is_anti_example(backend)},
                          {"grants", ledger.grants},
                          {"writes", ledger.writes},
                          {"accepted", ledger.accepted},
                          {"refused_by_fence", ledger.refused},
                          {"overlaps", ledger.overlaps},
                          {"stale_accepted_unfenced", writes.stale},
                          {"stale_accepted_fenced", writes.stale_accepted_fenced},
                          {"stale_refused_fenced", writes.stale - writes.stale_accepted_fenced},
                          {"current_refused_fenced", writes.current_refused},
                          {"stale_unfenced_by_token", ledger.stale_accepted_unfenced},
                          {"duplicate_tokens", ledger.duplicate_tokens},
                          {"longest_gap_ms", ledger.longest_gap.count()},
                          {"open_sections", ledger.open_sections},
                          {"lost_reported", t.lost_reported},
                          {"lost_unreported", t.lost_unreported},
                          {"next_grant_after_fault_start_ms", optional_ms(t.next_grant_after_start)},
                          {"recovery_ms", optional_ms(t.recovery)},
                          {"grants_after_fault", t.grants_after_fault}};
    for (const auto& item : extra.items()) row[item.key()] = item.value();
    if (!has_fencing_token(backend)) {
        // Every grant says token 0: the fenced copy cannot tell holders apart.
        for (const char* k : {"refused_by_fence", "stale_accepted_fenced", "stale_refused_fenced",
                              "current_refused_fenced", "stale_unfenced_by_token", "duplicate_tokens"})
            row[k] = nullptr;
        row["fencing"] = "none";
        if (!row.contains("notes")) row["notes"] = nlohmann::json::array();
        row["notes"].push_back("no fencing token: the fence columns are n/a");
    }
    return row;
}

nlohmann::json skipped_row(const std::string& backend, const std::string& fault, const std::string& status,
                           const std::string& reason) {
    return {{"backend", backend},
            {"fault", fault},
            {"status", status},
            {"anti_example", is_anti_example(backend)},
            {"reason", reason}};
}

}  // namespace zklock::cli::safety
