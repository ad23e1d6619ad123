// The checker of chaos runs and the safety report: what the clients of one lock
// did, judged against what a lock promises. Clients tell it when they enter and
// leave their critical section and when they write to the guarded resource;
// it keeps a fenced copy of the resource (the rule of zklock/fencing.hpp) and an
// unfenced one beside it, and counts what went wrong.
//
// Sans-io: no clock of its own (the caller passes steady_clock time points), no
// threads; summary() is a pure function of the events. Thread-safe: every
// member may be called from any thread (one mutex), so clients on several
// threads share one ledger.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::testing {

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

    /// True when nothing a lock with a fenced resource must prevent happened:
    /// no two grants with one token (the fenced resource, by its rule, accepts
    /// tokens in increasing order only, so accepted writes never overlap).
    bool fenced_safe() const noexcept { return duplicate_tokens == 0; }
    /// One line: "grants=N accepted=N refused=N overlaps=N stale_unfenced=N
    /// duplicate_tokens=N longest_gap_ms=N".
    std::string line() const;
};

class SafetyLedger {
public:
    using clock = std::chrono::steady_clock;
    using section_id = std::uint64_t;

    /// `client` was granted the lock with `token` at `at` and enters its
    /// critical section. Returns the section's id for write() and leave().
    section_id enter(std::string_view client, std::int64_t token, clock::time_point at = clock::now());
    /// The section writes to the resource. Returns the fenced resource's
    /// verdict: true accepted, false refused (stale).
    bool write(section_id section, clock::time_point at = clock::now());
    /// The section ends (released, or told of its loss).
    void leave(section_id section, clock::time_point at = clock::now());

    safety_summary summary() const;
    /// The accepted writes' tokens in the order the fenced resource accepted them.
    std::vector<std::int64_t> accepted_tokens() const;

private:
    struct section {
        std::string client;
        std::int64_t token = 0;
        bool open = true;
    };
    mutable std::mutex mutex_;
    std::vector<section> sections_;
    std::optional<std::int64_t> fenced_token_;      // highest token the fenced resource accepted
    std::optional<section_id> fenced_writer_;       // the section that wrote it
    std::optional<std::int64_t> unfenced_newest_;   // highest token ever written to the unfenced copy
    std::vector<std::int64_t> accepted_tokens_;
    std::optional<clock::time_point> last_grant_;
    clock::duration longest_gap_{};
    safety_summary counts_;
};

} // namespace zklock::testing
