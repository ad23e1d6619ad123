// The decisions of the Redis and Redlock lock recipe: pure functions over the
// masters' answers, no server involved (the Redis backend runs them; a single
// Redis server is Redlock with one master).
#pragma once


#include <chrono>
#include <cstddef>
#include <system_error>
#include <vector>

namespace zklock::detail::redlock {

using duration = std::chrono::steady_clock::duration;

/// One master's answer to a script (acquire: SET NX PX + INCR; renew:
/// compare-and-PEXPIRE).
struct master_reply {
    enum class kind {
        yes,     ///< acquire: the key was set (value: the fencing counter); renew: extended
        no,      ///< acquire: another holder's key is there; renew: the key is no longer ours
        failed,  ///< no answer or an error reply (error says which)
    } k = kind::failed;
    long long value = 0;
    std::error_code error;
};

/// A majority of `masters`: masters / 2 + 1.
std::size_t quorum(std::size_t masters) noexcept;

/// The clock drift allowed for a lease of `ttl`: ttl / 100 + 2 ms (the Redlock
/// algorithm's allowance for clocks running at different rates).
std::chrono::milliseconds drift(std::chrono::milliseconds ttl) noexcept;

/// What is left of a lease set during a round that took `elapsed`:
/// ttl - elapsed - drift (may be negative).
duration validity(std::chrono::milliseconds ttl, duration elapsed, std::chrono::milliseconds drift) noexcept;

/// Whether the acquire script may have run on a master that did not answer yes:
/// a failure after the command was sent (lost connection, reply timeout) may
/// have left our key set; a refused connection, a closed service, a connect
/// timeout or refused credentials (errc::auth_failed, errc::no_auth,
/// errc::invalid_argument for a refused SELECT: the connection sends nothing
/// before its AUTH and SELECT succeed) did not.
bool may_have_run(const master_reply& reply) noexcept;

/// An acquire round's answers counted.
struct round_tally {
    std::size_t yes = 0, no = 0, failed = 0;
    long long fence = 0;        ///< the largest counter among the yes answers
    bool undo = false;          ///< some master may hold our key: delete it unless the round wins
    std::error_code first_error;  ///< of the failures; refused credentials ahead of any other
};
round_tally tally(const std::vector<master_reply>& replies);

/// The round holds the lock: a majority set the key and time is left on the lease.
bool won(const round_tally& t, std::size_t quorum, duration validity) noexcept;

/// What a waiter does after a round that did not win (its keys already deleted).
enum class after_round {
    fail,              ///< the servers refused (no holder seen, no majority): report first_error now
    retry_on_error,    ///< the servers refused, but the acquire has a deadline: back off and retry
                       ///< (not when they refused our credentials or db: that is fail)
    give_up,           ///< try_lock, or the deadline passed: not acquired, no error
    wait,              ///< a holder has it: wait for its release (pub/sub) with backoff as the fallback
    retry_split_vote,  ///< no holder has a majority either (contenders split the masters): retry after a short random delay
};
after_round next_step(const round_tally& t, std::size_t quorum, bool no_wait, bool has_deadline, bool deadline_passed,
                      bool service_closed) noexcept;

/// What a release (compare-and-delete on every master) reports: {} when some
/// master deleted our key, errc::node_deleted when a master answered and none
/// held our key any more, else the first failure's error.
std::error_code after_release(const std::vector<master_reply>& replies);

/// What a held lock does with the answers to one renewal.
enum class renewal {
    extended,     ///< a majority extended the lease
    lost,         ///< more masters than a minority say the key is no longer ours: the lock is gone
    retry_sooner, ///< too few answers either way: retry soon, until the lease runs out
};
renewal after_renewal(const std::vector<master_reply>& replies, std::size_t quorum) noexcept;

} // namespace zklock::detail::redlock
