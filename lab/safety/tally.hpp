// zklock bench --safety: from what the clients of one run did to the row of
// the report. Pure; unit-tested.
//
// The SafetyLedger (lab/safety/safety_ledger.hpp) judges the writes
// (overlaps, stale writes accepted by the unfenced copy, refused by the fenced
// one, duplicate tokens, the longest gap). This adds what the ledger does not
// keep: which critical section was overtaken by a later grant, whether its
// holder was told, and how long the lock took to be granted again.
#pragma once

#include "safety/safety_ledger.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zklock::cli::safety {

using clock_type = std::chrono::steady_clock;

/// Judges writes by grant order, whatever their tokens say: a write is stale
/// when a section granted after its own has already written. The unfenced
/// copy takes every write, so each stale write is damage there; the fenced
/// copy's verdict says whether the fence caught it. When tokens follow the
/// grants (ZooKeeper's czxid) the fence refuses every stale write and no
/// current one; a counter that restarted (Redis without persistence) can let
/// a stale write through and refuse the current holder's.
class grant_order_judge {
public:
    /// Section `section` (numbered in grant order from 0) wrote, and the fenced
    /// copy accepted the write or not.
    void write(std::size_t section, bool fenced_accepted);

    std::uint64_t stale = 0;                  ///< stale writes: what the unfenced copy took that it should not have
    std::uint64_t stale_accepted_fenced = 0;  ///< stale writes the fenced copy accepted too: the fence failed
    std::uint64_t current_refused = 0;        ///< writes of the newest writer the fenced copy refused

private:
    std::optional<std::size_t> newest_writer_;
};

/// One critical section, as the bench saw it.
struct section_record {
    int client = 0;
    std::int64_t token = 0;
    clock_type::time_point entered;
    std::optional<clock_type::time_point> left;
    /// Another client was granted the lock while this section was open.
    bool overtaken = false;
    /// The loss the holder was told of before it left ("" when none).
    std::string lost_reason;
    /// Its release's outcome: "" when it succeeded, "lost: ..." when it found
    /// the lock gone (the holder is told then), "error: ..." when it failed;
    /// nullopt when it never released.
    std::optional<std::string> release_error;
    /// Its process was killed in the section: nobody could tell it anything.
    bool holder_killed = false;
};

/// When the fault started and ended (equal for an instant fault).
struct fault_window {
    clock_type::time_point start, end;
};

/// What a run adds to the ledger's summary.
struct run_tally {
    std::uint64_t lost_reported = 0;    ///< sections whose holder was told of a loss (before leaving, or at release)
    std::uint64_t lost_unreported = 0;  ///< overtaken sections whose holder was never told (killed holders excluded)
    /// From the fault's start to the first grant after it; nullopt: none.
    std::optional<std::chrono::milliseconds> next_grant_after_start;
    /// From the fault's end to the first grant after it; nullopt: none (stuck).
    std::optional<std::chrono::milliseconds> recovery;
    std::uint64_t grants_after_fault = 0;  ///< grants from the fault's end on
};

run_tally tally(const std::vector<section_record>& sections, const fault_window& fault);

/// The sections worth a look: overtaken by another grant, told of a loss, or
/// killed; each with its client, token, what it was told, and when it was
/// entered and left in ms from the fault's start (negative: before it).
nlohmann::json incidents(const std::vector<section_record>& sections, const fault_window& fault);

/// A report row: the ledger's summary (grants, overlaps, the fenced copy's
/// verdicts by token, duplicate tokens, the longest gap), the writes judged by
/// grant order, the tally, and what the bench noticed (a stuck key, errors).
/// `status` is "ran"; other rows are made by skipped_row().
nlohmann::json make_row(const std::string& backend, const std::string& fault, const lab::safety_summary& ledger,
                        const grant_order_judge& writes, const run_tally& t, const nlohmann::json& extra);
/// A row that did not run: status "not applicable" or "skipped", and why.
nlohmann::json skipped_row(const std::string& backend, const std::string& fault, const std::string& status,
                           const std::string& reason);

}  // namespace zklock::cli::safety
