// zklock bench --safety: what a client process and the bench's guarded
// resource say to each other, and how the resource answers. Pure; unit-tested.
//
// Each client runs in its own process (a hidden `zklock-bench bench-safety-client`),
// so that a pause is a real SIGSTOP of everything it runs, its lock library's
// threads included. It talks to the bench over a Unix socket, one line per
// request and one line per answer; it waits for every answer, so the bench
// sees each client's steps in the order they happened, and a write reaches
// the resource when the client makes it (a paused client's late write arrives
// late). A client's life:
//
//     hello <index>        -> config <json>        what to lock, where, how
//     next                 -> go | stop            before each acquire
//     between              -> go                   SETNX+EXPIRE only: SETNX won, EXPIRE not sent yet
//     failed <text>        -> ok                   an acquire failed (it tries again)
//     enter <token>        -> ok                   granted, with its fencing token
//     ready <n>            -> go | end             it checked it still holds the lock; may it write the n-th time?
//     write                -> accepted | refused   the write itself (the fenced copy's verdict)
//     leave <reason | ->   -> ok                   the critical section ends (the loss it was told of, or -)
//     released <ok | text> -> ok                   its release's outcome: "lost: ..." when the release
//                                                  found the lock gone, "error: ..." when it failed
//
// The bench holds back an answer to stage a fault at the right moment: the
// paused holder is stopped with its `go` unread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zklock::cli::safety {

enum class request_kind { hello, next, between, failed, enter, ready, write, leave, released };

struct request {
    request_kind kind = request_kind::next;
    std::int64_t number = 0;  ///< hello: the client's index; enter: the token; ready: the write's number (from 1)
    std::string text;         ///< failed: why; leave: the loss reason ("" for none); released: "" for ok, else why
};

/// The line for `r` (no newline). Text is kept on one line (control characters
/// become spaces).
std::string format(const request& r);
/// The request on `line` (no newline), or nullopt when it is not one.
std::optional<request> parse_request(std::string_view line);

/// Where the bench stands in a run, for the answers below.
struct run_phase {
    bool fault_armed = false;     ///< the next holder to reach the trigger gets the fault
    bool fault_started = false;
    bool fault_ended = false;
    /// The fault has ended and a lease has passed since it began: the section
    /// it hit may end (a section outlasts a restart that takes milliseconds).
    bool fault_settled = false;
    bool stopping = false;        ///< the run is over: sections end, clients stop
};

/// What the faulted holder's section has done.
struct faulted_section {
    bool is_faulted = false;          ///< this section is the one the fault hit
    bool wrote_after_fault = false;   ///< it has written since the fault ended (its late write)
};

enum class answer { go, end, hold_back };

/// The answer to `ready <n>`. Sections make `writes_per_section` writes; the
/// section the fault hits keeps writing until the fault has settled and it has
/// written once more since the fault ended (the late write); with the fault armed and a trigger at
/// the second write, the first section to reach it is held back (hold_back:
/// the bench stages the fault, then answers go).
answer answer_ready(std::int64_t n, int writes_per_section, bool trigger_at_second_write, const run_phase& phase,
                    const faulted_section& section);

/// The answer to `next`: go, or end (meaning stop) once the run is over.
answer answer_next(const run_phase& phase);

}  // namespace zklock::cli::safety
