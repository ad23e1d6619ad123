// The checker of chaos runs and the safety report: what the clients of one lock
// did, judged against what a lock promises. Clients tell it when they enter and
// leave their critical section and when they write to the guarded resource;
// it keeps a fenced copy of the resource (the rule of zklock/fencing.hpp) and an
// unfenced one beside it, and counts what went wrong.
//
// Loss reports: a holder told its lock was lost (on_lost, is_held() turning
// false, a release that finds the lock gone) says so with lost(). A section
// that overlapped a later one is then explained: the server gave the lock away
// while the holder could not know (paused, cut off, its session expired). An
// overlap whose earlier section ended in a clean release is unexplained: two
// clients held the lock at once and neither was told, which a lock must never
// do. A ledger for a semaphore (`permits` > 1) counts an overlap when a section
// starts while `permits` sections of other clients are open.
//
// Sans-io: no clock of its own (the caller passes steady_clock time points), no
// threads; summary() is a pure function of the events. Thread-safe: every
// member may be called from any thread (one mutex), so clients on several
// threads share one ledger.
#pragma once


#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zklock::lab {

/// What a run did, and the violations in it.
struct safety_summary {
    std::uint64_t grants = 0;            ///< critical sections entered
    std::uint64_t writes = 0;            ///< writes attempted
    std::uint64_t accepted = 0;          ///< writes the fenced resource accepted
    std::uint64_t refused = 0;           ///< stale writes the fenced resource refused
    /// Sections entered while another client's section was still open: two
    /// clients believed they held the lock at once (a paused or partitioned
    /// holder that had not learnt of its loss yet counts).
    std::uint64_t overlaps = 0;
    /// Writes an unfenced resource accepted although a newer holder had already
    /// written: the damage fencing prevents.
    std::uint64_t stale_accepted_unfenced = 0;
    /// Writes the fenced resource accepted with the same token as an earlier
    /// accepted write of another section: two grants with one token. Must be 0.
    std::uint64_t duplicate_tokens = 0;
    /// Longest time between two grants (from the first to the last grant).
    std::chrono::milliseconds longest_gap{0};
    /// Sections still open when summary() was called.
    std::uint64_t open_sections = 0;
    /// Sections whose holder was told the lock was lost (lost()).
    std::uint64_t lost = 0;
    /// Overlaps no loss report explains: the section that was open when a
    /// later one started ended in a clean release (never lost()). Must be 0.
    std::uint64_t unexplained_overlaps = 0;
    /// Writes the fenced resource accepted with a token lower than one it had
    /// accepted before. The rule forbids it: nonzero means the resource's
    /// check is broken. Must be 0.
    std::uint64_t out_of_order_accepts = 0;
    /// Accepted writes of a section after another section's accepted write,
    /// when the first section had accepted writes before: two holders' accepted
    /// writes interleaved on the fenced resource. Must be 0.
    std::uint64_t interleaved_accepts = 0;
    /// Sections entered while another client's open section still had a
    /// positive safe-time budget (Lock::safe_for(), as budget() recorded it):
    /// the budget said the earlier hold was certainly safe at an instant when
    /// another client held. Must be 0.
    std::uint64_t overlaps_inside_budget = 0;
    /// Sections whose holder recorded a budget (budget()).
    std::uint64_t budgeted = 0;

    /// True when nothing a lock with a fenced resource must prevent happened:
    /// no two grants with one token (the fenced resource, by its rule, accepts
    /// tokens in increasing order only, so accepted writes never overlap).
    bool fenced_safe() const noexcept { return duplicate_tokens == 0; }
    /// fenced_safe(), and every accepted write in token order without
    /// interleaving, every overlap explained by a loss report, and none inside
    /// a holder's safe-time budget.
    bool safe() const noexcept {
        return fenced_safe() && out_of_order_accepts == 0 && interleaved_accepts == 0 && unexplained_overlaps == 0 &&
               overlaps_inside_budget == 0;
    }
    /// One line: "grants=N accepted=N refused=N overlaps=N stale_unfenced=N
    /// duplicate_tokens=N longest_gap_ms=N".
    std::string line() const;
};

/// Records who entered and left the critical section with which token, and judges the record: overlaps, token order, lost sections.
class SafetyLedger {
public:
    /// The clock of the record.
    using clock = std::chrono::steady_clock;
    /// Names one entered section.
    using section_id = std::uint64_t;

    /// A ledger for a lock with `permits` holders at once (1: a mutex, the
    /// default; more: a semaphore, whose writes the single fenced resource does
    /// not model: record enter, leave and lost only).
    explicit SafetyLedger(std::size_t permits = 1);

    /// `client` was granted the lock with `token` at `at` and enters its
    /// critical section. Returns the section's id for write() and leave().
    section_id enter(std::string_view client, std::int64_t token, clock::time_point at = clock::now());
    /// The section writes to the resource. Returns the fenced resource's
    /// verdict: true accepted, false refused (stale).
    bool write(section_id section, clock::time_point at = clock::now());
    /// The section ends (released, or told of its loss).
    void leave(section_id section, clock::time_point at = clock::now());
    /// The section's holder was told its lock was lost. Ends the section when
    /// it is still open; called after leave() (a release that found the lock
    /// gone) it marks how the section ended.
    void lost(section_id section, clock::time_point at = clock::now());
    /// The section's holder, on ZooKeeper session `session`, saw its hold
    /// certainly safe until `safe_until` (now + Lock::safe_for()); the latest
    /// such instant of the section is kept. A section entered by another
    /// client before that instant, while this one was open, counts in
    /// overlaps_inside_budget (for a semaphore: when `permits` such sections
    /// were open).
    void budget(section_id section, clock::time_point safe_until, std::int64_t session);
    /// The section's holder was granted on ZooKeeper session `session`. A
    /// section granted on a session ended by force (forced_end(): its client
    /// read a grant the server made to a session that was gone) is no grant of
    /// the server's, and the budgets of the sections open then do not count
    /// against it.
    void held_on(section_id section, std::int64_t session);
    /// `client`'s session `session` is ended by force (a fault that closes it
    /// on the server at once, as an operator could): what the budgets of its
    /// sections on that session claim, before or after, is outside the
    /// budget's rule (which covers expiry by silence), and not counted.
    void forced_end(std::string_view client, std::int64_t session);

    /// The verdict so far.
    safety_summary summary() const;
    /// The token the fenced resource records now (the highest it accepted), if any.
    std::optional<std::int64_t> fenced_token() const;
    /// The accepted writes' tokens in the order the fenced resource accepted them.
    std::vector<std::int64_t> accepted_tokens() const;

private:
    struct section {
        std::string client;
        std::int64_t token = 0;
        bool open = true;
        bool lost = false;
        bool wrote = false;  // has an accepted write
        clock::time_point entered{};
        std::optional<clock::time_point> safe_until;  // budget(): the latest instant the holder saw as safe
        std::int64_t session = 0;                     // held_on() or budget(): the session it held on
        std::vector<section_id> overlapped;  // other clients' sections open when this one started
    };
    mutable std::mutex mutex_;
    std::size_t permits_ = 1;
    std::vector<section> sections_;
    std::optional<std::int64_t> fenced_token_;      // highest token the fenced resource accepted
    std::optional<section_id> fenced_writer_;       // the section that wrote it
    std::optional<std::int64_t> unfenced_newest_;   // highest token ever written to the unfenced copy
    std::vector<std::int64_t> accepted_tokens_;
    std::optional<clock::time_point> last_grant_;
    std::vector<std::pair<std::string, std::int64_t>> forced_;  // forced_end(): client, session
    clock::duration longest_gap_{};
    safety_summary counts_;
};

} // namespace zklock::lab
