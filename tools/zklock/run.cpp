// zklock run: hold a lock (or, with --permits, one permit of a semaphore; with
// --shared, a reader's hold; with several lock paths, a lock set) while a
// command runs (flock(1), `etcdctl lock`, `consul lock [-n K]`); zklock lock:
// hold it until a stop signal.
#include "arguments.hpp"
#include "command_child.hpp"
#include "connect_string.hpp"
#include "commands.hpp"
#include "hold_text.hpp"
#include "holding.hpp"
#include "supervisor.hpp"
#include "terminal_text.hpp"

#include <zklock/error.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/lock_path.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/session.hpp>

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zklock::cli {
namespace {
namespace asio = boost::asio;

// "SIGTERM", as kill -l names it.
std::string signal_name(int sig) {
    const char* abbrev = ::sigabbrev_np(sig);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}
using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;

struct run_options {
    std::string connect;
    int session_timeout_ms = 10000;
    std::string wait_text;            // -w as given
    std::optional<milliseconds> wait;  // -w: give up after this long (never zero: that is no_wait)
    bool no_wait = false;              // -n, -w 0
    std::optional<int> permits;        // --permits K: a semaphore lease instead of the lock
    std::string names = "zklock";      // --names: how the lock's node is named
    bool shared = false;               // --shared: a reader of the read-write lock at LOCK_PATH
    std::string name;                  // --name: the node's data, status's OWNER
    int conflict_exit_code = exit_not_acquired;  // -E: when -n or -w found the lock busy
    milliseconds connect_timeout = default_connect_timeout;
    bool hold_only = false;            // zklock lock: no command, hold until SIGINT, SIGTERM or SIGHUP
    std::optional<long long> repeat;   // --repeat N: N turns (0: until stopped), requeued in one transaction
    int grace_ms = 5000;
    bool verbose = false;
    milliseconds lock_delay{0};        // --lock-delay
    bool revocable = false;            // --revocable: let go when asked (exit_revoked)
    bool exclusive = false;            // -x: flock's, what the lock is anyway
    bool close = false;                // -o: flock's, what zklock's descriptors are anyway
    auth_options auth;
    std::string path;                  // the first LOCK_PATH
    std::vector<std::string> paths;    // every LOCK_PATH: more than one is a lock set (run only)
    std::vector<std::string> words;    // what CLI11 leaves after LOCK_PATH
    std::vector<std::string> command;
};

// How long the release may take to commit before zklock exits anyway; closing the
// session on exit deletes the node all the same.
constexpr milliseconds release_timeout{3000};

long long elapsed_ms(clock_type::time_point since) {
    return std::chrono::duration_cast<milliseconds>(clock_type::now() - since).count();
}

// One `zklock run`.
class runner final : public supervisor {
public:
    runner(run_options o, SessionOptions so)
        : supervisor(std::move(so), milliseconds(o.grace_ms), o.verbose),
          o_(std::move(o)),
          hold_(make_holding(io_, session_, o_.paths, kind_of(o_))),
          release_timer_(io_),
          budget_timer_(io_),
          started_(clock_type::now()) {}

private:
    enum class phase { acquiring, running, releasing };

    static holding_kind kind_of(const run_options& o) {
        holding_kind k;
        if (o.permits) k.permits = static_cast<std::size_t>(*o.permits);
        k.shared = o.shared;
        k.names = parse_node_names(o.names).value_or(node_names::zklock);
        k.node_data = o.name;
        k.lock_delay = o.lock_delay;
        k.revocable = o.revocable;
        return k;
    }

    std::string what() const {
        if (o_.permits) return "a permit of " + o_.path + " (" + counted(static_cast<long long>(*o_.permits), "permit") + ")";
        if (o_.paths.size() == 1) return (o_.shared ? "a shared hold of lock " : "lock ") + o_.path;
        std::string all;
        for (const auto& p : o_.paths) all += (all.empty() ? "" : ", ") + p;
        return "locks " + all;
    }

    void on_stop(const stop_request& r) override {
        switch (phase_) {
        case phase::acquiring:
            // The pending acquire completes with operation_canceled (it deletes its
            // node first), and that handler exits.
            stop_signal_ = r.signal;
            hold_->cancel();
            break;
        case phase::running:
            if (o_.hold_only) {  // zklock lock: the signal is the way to let go
                if (o_.verbose) notice(signal_name(r.signal) + ": releasing " + what());
                return release(0);
            }
            if (!stop_signal_) stop_signal_ = r.signal;
            // A signal the kernel sent to the whole group (Ctrl-C) reached CMD already.
            child_.stop(r.signal, !r.whole_group);
            break;
        case phase::releasing:
            break;
        }
    }

    void on_connected() override {
        if (o_.verbose) notice("waiting for " + what());
        wait_started_ = clock_type::now();
        std::optional<milliseconds> wait;
        // -w bounds the connect and the wait together.
        if (o_.wait) wait = std::max(*o_.wait - milliseconds(elapsed_ms(started_)), milliseconds(1));
        hold_->on_event([this](const lock_event& e) {
            // A request the lock honours ends the hold: on_lost() tells that.
            if (e.kind == lock_event_kind::revocation_requested && !e.reason && phase_ == phase::running)
                notice("a revocation request came (zklock revoke, or a peer's Revoker); without --revocable the " +
                       std::string(o_.permits ? "permit" : "lock") + " is kept");
        });
        hold_->acquire(o_.no_wait, wait, [this](std::error_code e, bool ok) { on_acquired(e, ok); });
    }

    void on_acquired(std::error_code ec, bool acquired) {
        if (ec == std::errc::operation_canceled || (stop_signal_ && !acquired)) return finish(128 + stop_signal_);
        if (ec == errc::permits_mismatch) {
            // A blocking read, on this thread: the session runs its own.
            std::error_code read;
            const auto stored = stored_permits(session_, o_.path, read);
            notice(permits_mismatch_text(o_.path, read ? std::nullopt : stored, static_cast<std::size_t>(*o_.permits)));
            return finish(exit_usage);
        }
        if (ec) return finish(report_failure(session_, "acquire " + what(), ec, hold_->failure_detail()));
        if (!acquired) {
            if (o_.no_wait) notice(busy_message());
            else notice(what() + " not acquired within " + std::to_string(o_.wait->count()) + " ms");
            return finish(o_.conflict_exit_code);
        }
        if (stop_signal_) return release(128 + stop_signal_);  // signalled as the grant arrived
        ++turn_;
        node_ = hold_->node_path();
        token_ = hold_->fencing_token();
        if (o_.verbose)
            notice("acquired " + what() + " (node " + node_ + ", fencing token " + std::to_string(token_) + ") after " +
                   std::to_string(elapsed_ms(wait_started_)) + " ms");
        phase_ = phase::running;
        hold_->wait_lost([this](std::error_code e) { on_lost(e); });
        start_command();
        if (!o_.hold_only) watch_budget();
    }

    // The command stops once the hold is no longer certainly safe (Lock::
    // safe_for(): nothing heard from the server for about a session timeout),
    // before the server may expire the session and grant the lock to another.
    void watch_budget() {
        const auto left = hold_->safe_for();
        if (!left || phase_ != phase::running || lost_) return;  // a backend without a bound: nothing to watch
        if (left->count() > 0) {
            budget_timer_.expires_after(*left);
            budget_timer_.async_wait([this](boost::system::error_code ec) {
                if (!ec) watch_budget();
            });
            return;
        }
        budget_spent(true);
        child_.stop(SIGTERM);
    }

    // The hold's budget has run out: the lock is no longer certainly held, a
    // loss. Said so, with `stopping` when the command still runs.
    void budget_spent(bool stopping) {
        lost_ = true;
        lost_reason_ = make_error_code(errc::connection_suspended);
        notice(std::string(o_.permits ? "permit" : "lock") +
               " no longer certainly held: nothing heard from ZooKeeper for the session timeout (less 1%)" +
               (stopping ? "; stopping the command" : " before the command ended"));
    }

    // Why -n did not get it, naming the holders as zklock status does (a lock
    // set: without; its paths would have to be listed one by one).
    std::string busy_message() {
        if (o_.paths.size() != 1) return hold_->busy_message();
        std::error_code ec;
        const auto listing = list_queue(session_, o_.path, ec);  // blocking, on this thread: the session runs its own
        if (ec) return hold_->busy_message();
        return busy_text(hold_->busy_message(), listing, o_.permits ? static_cast<std::size_t>(*o_.permits) : 1,
                         o_.shared);
    }

    void start_command() {
        if (o_.hold_only) {
            // What CMD would get in its environment, so that `eval` can use it.
            std::cout << "ZKLOCK_LOCK_NODE=" << node_ << "\nZKLOCK_FENCING_TOKEN=" << token_ << std::endl;
            return;
        }
        command_child::environment env{{"ZKLOCK_LOCK_NODE", node_}, {"ZKLOCK_FENCING_TOKEN", std::to_string(token_)}};
        if (o_.repeat) env.emplace_back("ZKLOCK_TURN", std::to_string(turn_));
        const int err = child_.start(o_.command, env, [this](int status) { on_child_exit(status); });
        if (err) {
            notice(shortened(o_.command[0]) + ": " + std::strerror(err));
            release(err == ENOENT ? 127 : 126);
        }
    }

    void on_lost(std::error_code ec) {
        // An empty code means we released it; not_held, that it was lost before
        // this wait was registered.
        if (!ec || ec == std::errc::operation_canceled) return;
        if (ec != errc::not_held) lost_reason_ = ec;
        if (phase_ == phase::releasing && waiting_for_loss_reason_) return lost_before_the_end(lost_reason_);
        if (phase_ != phase::running) return;
        lost_ = true;
        if (ec == errc::revoked) {
            // Asked to let go (--revocable): the library released it already.
            notice(std::string(o_.permits ? "permit" : "lock") + " revoked: " + loss_reason(ec) +
                   (o_.hold_only ? "; released" : "; stopping the command"));
            if (o_.hold_only) return finish(exit_revoked);
            child_.stop(SIGTERM);
            return;
        }
        const std::string lost = o_.permits ? "permit lost" : "lock lost";
        const std::string why = ec != errc::not_held ? ": " + loss_reason(ec)
                                : o_.hold_only       ? std::string(" as it was granted")
                                                     : std::string(" before the command started");
        notice(lost + why + (o_.hold_only ? "" : "; stopping the command"));
        if (o_.hold_only) return finish(exit_lock_lost);
        child_.stop(SIGTERM);
    }

    // The status of a command that ran while the lock was lost: 79 when it
    // was revoked (asked to let go), 76 otherwise.
    int lost_status() const { return lost_reason_ == errc::revoked ? exit_revoked : exit_lock_lost; }

    void on_child_exit(int status) {
        if (o_.verbose) notice("command " + describe_status(status));
        if (lost_) return finish(lost_status());
        // Still held, but its budget ran out before the command's end was seen
        // (zklock was paused, or the budget's timer is due behind this): the
        // command did not end certainly holding the lock, whatever the release
        // then says (one nobody confirms must not turn it into the command's own
        // status). A hold already over is a loss whose reason is on its way: the
        // release says not_held and waits for it.
        if (const auto left = hold_->safe_for();
            phase_ == phase::running && hold_->is_held() && left && left->count() <= 0) {
            budget_spent(false);
            return finish(exit_lock_lost);
        }
        const int code = stop_signal_ ? 128 + stop_signal_ : shell_status(status);
        // --repeat: the next turn, unless this was the last, CMD failed or a signal came.
        if (o_.repeat && code == 0 && (*o_.repeat == 0 || turn_ < *o_.repeat)) return next_turn();
        release(code);
    }

    // The lock handed on and queued for again in one transaction (QueueLock::
    // requeue); -n and -w bound each turn's wait.
    void next_turn() {
        phase_ = phase::acquiring;
        wait_started_ = clock_type::now();
        if (o_.verbose) notice("turn " + std::to_string(turn_) + " done; requeueing for " + what());
        if (!hold_->requeue(o_.no_wait, o_.wait, [this](std::error_code e, bool ok) { on_acquired(e, ok); }))
            release(0);  // a lock set has no requeue (refused before the connect)
    }

    void release(int code) {
        phase_ = phase::releasing;
        release_code_ = code;
        release_timer_.expires_after(release_timeout);
        release_timer_.async_wait([this](boost::system::error_code ec) {
            if (ec || finished()) return;
            if (waiting_for_loss_reason_) return lost_before_the_end({});
            notice("release of " + o_.path + " not confirmed within " + std::to_string(release_timeout.count()) +
                   " ms; exiting (the session's end deletes the node)");
            finish(release_code_);
        });
        hold_->release([this](std::error_code ec) {
            if (finished()) return;
            if (is_lock_lost(ec)) return lost_before_the_end(ec);  // lost first, though not yet told
            if (ec == errc::not_held) {
                // Lost while the command ran, and its reason is on its way (or came).
                if (lost_reason_) return lost_before_the_end(lost_reason_);
                waiting_for_loss_reason_ = true;  // on_lost finishes; release_timer_ bounds it
                release_code_ = exit_lock_lost;
                return;
            } else if (ec) {
                notice("release of " + o_.path + ": " + ec.message());
            } else if (o_.verbose) {
                notice("released " + what());
            }
            finish(release_code_);
        });
    }

    // The lock was lost while the command ran (whatever zklock learnt first):
    // exit 76, saying why when known.
    void lost_before_the_end(std::error_code why) {
        const bool revoked = why == errc::revoked;
        notice((o_.permits ? "permit" : "lock") + std::string(revoked ? " revoked" : " lost") +
               " before the command ended" + (why ? ": " + loss_reason(why) : std::string()));
        finish(revoked ? exit_revoked : exit_lock_lost);
    }

    run_options o_;
    std::unique_ptr<holding> hold_;  // destroyed before the session it uses
    asio::steady_timer release_timer_;
    asio::steady_timer budget_timer_;  // watch_budget()

    phase phase_ = phase::acquiring;
    clock_type::time_point started_;
    clock_type::time_point wait_started_;
    std::string node_;
    std::int64_t token_ = 0;
    long long turn_ = 0;  // the turns granted so far (ZKLOCK_TURN: 1-based)
    int stop_signal_ = 0;
    bool lost_ = false;
    std::error_code lost_reason_;           // why the lock was lost, once told
    bool waiting_for_loss_reason_ = false;  // released after a loss whose reason has not come
    int release_code_ = 1;
};

int run_command(run_options o) {
    // zklock run /a /b -- CMD: more lock paths up to the "--" (zklock lock takes one).
    auto more = o.hold_only ? lock_path_words{{}, std::move(o.words)} : split_lock_paths(std::move(o.words));
    o.paths = {o.path};
    o.paths.insert(o.paths.end(), more.more_paths.begin(), more.more_paths.end());
    const bool separated = !more.rest.empty() && more.rest.front() == "--";
    auto words = split_trailing(std::move(more.rest));
    // flock's order, `flock FILE -c CMD`: a -c after the lock path whose value
    // is no connect string is flock's command.
    if (const auto& m = words.misplaced;
        m.size() >= 2 && (m[0] == "-c" || m[0] == "--command") && !connect_string_problem(m[1]).empty()) {
        notice(flock_command_hint("zklock run", o.paths.size() == 1 ? o.path : std::string(), m[1]));
        return exit_usage;
    }
    if (!words.misplaced.empty()) {
        notice(misplaced_option_hint(o.hold_only ? "zklock lock" : "zklock run", "LOCK_PATH", o.paths, words));
        return exit_usage;
    }
    // CMD without its "--" is refused, as zklock elect refuses it: a word
    // after the lock path could be CMD or one more lock path ("/a /b make").
    if (!separated && !words.command.empty()) {
        notice("run: " + missing_separator_hint("zklock run", o.paths, words.command));
        return exit_usage;
    }
    o.command = std::move(words.command);
    if (o.command.empty() && !o.hold_only) {
        notice("run: no command given (zklock run LOCK_PATH -- CMD [ARGS...]; zklock lock LOCK_PATH holds it "
               "without one)");
        return exit_usage;
    }
    for (const auto& path : o.paths)
        if (const auto problem = lock_path_problem(path); !problem.empty()) {
            notice(problem);
            return exit_usage;
        }
    if (o.paths.size() > 1)
        if (std::string reason; validate_lock_set(o.paths, &reason)) {  // twice, or nested
            notice(reason);
            return exit_usage;
        }
    if (o.paths.size() > 1 && o.permits) {
        notice("--permits: a semaphore has one LOCK_PATH, not " + std::to_string(o.paths.size()));
        return exit_usage;
    }
    if (o.paths.size() > 1 && o.shared) {
        notice("--shared: several lock paths are taken as one exclusive lock set, not shared");
        return exit_usage;
    }
    if (o.repeat && o.paths.size() > 1) {
        notice("--repeat: a lock set (several lock paths) cannot requeue in one transaction; give one LOCK_PATH");
        return exit_usage;
    }
    if (o.paths.size() > 1 && o.names != to_string(node_names::zklock)) {
        notice("--names " + o.names + ": several lock paths are taken as one zklock lock set, in zklock's names");
        return exit_usage;
    }
    if (o.permits && o.names != to_string(node_names::zklock)) {
        notice("--names " + o.names + ": a semaphore (--permits) writes only zklock's names");
        return exit_usage;
    }
    if (o.permits && o.shared) {
        notice("--shared: a semaphore (--permits) has no shared holds");
        return exit_usage;
    }
    if (!o.wait_text.empty()) {
        const auto wait = parse_wait_duration(o.wait_text);
        if (!wait) {  // checked by CLI11 already
            notice("-w: " + wait.error);
            return exit_usage;
        }
        // -w 0: do not wait (as -n, and flock -w 0).
        if (wait.value.count() == 0) o.no_wait = true;
        else o.wait = wait.value;
        if (const auto hint = wait_unit_hint("-w", o.wait_text); !hint.empty()) notice(hint);
    }
    auto so = session_options_of(o.connect, o.wait ? std::min(*o.wait, o.connect_timeout) : o.connect_timeout, o.auth);
    if (!so) return exit_usage;
    so->session_timeout = milliseconds(o.session_timeout_ms);
    runner r(std::move(o), std::move(*so));
    return r.run();
}

// The options and the LOCK_PATH run and lock share.
void add_hold_options(CLI::App& cmd, run_options& o) {
    add_connect_option(cmd, o.connect, true);
    add_connect_timeout_option(cmd, o.connect_timeout);
    add_auth_options(cmd, o.auth);
    add_duration_option(cmd, "--session-timeout", o.session_timeout_ms,
                        "Requested ZooKeeper session timeout (the server keeps it within 2 and 20 ticks)",
                        {milliseconds(1), max_wait});
    auto* wait = cmd.add_option("-w,--timeout", o.wait_text,
                                "Give up (exit 75, or -E's) if the lock is not acquired within TIME (also bounds the "
                                "connect): milliseconds (300) or with a unit (1.5s, 500ms, 2m); 0: do not wait, as -n. "
                                "A plain number is milliseconds, not flock's seconds: -w 5 waits 5 ms, and a plain "
                                "number from 1 to 999 gets a note on stderr that says so")
                     ->type_name("TIME")
                     ->check(duration_check(true));
    cmd.add_flag("-n,--nonblock", o.no_wait, "Fail at once (exit 75, or -E's) if the lock is held")->excludes(wait);
    add_duration_option(cmd, "--lock-delay", o.lock_delay,
                        "After a holder was lost without releasing (session expired, node deleted), wait TIME before "
                        "holding; 0: off",
                        {milliseconds(0), max_wait});
    cmd.add_option("-E,--conflict-exit-code", o.conflict_exit_code,
                   "Exit status when -n or -w finds the lock busy (as flock -E)")
        ->type_name("N")
        ->capture_default_str()
        ->check(CLI::Range(0, 255));
    cmd.add_option_function<int>(
           "--permits", [&o](int k) { o.permits = k; },
           "Semaphore mode: hold one of K permits of LOCK_PATH instead of the lock (as consul lock -n K)")
        ->type_name("K")
        ->check(CLI::PositiveNumber);
    auto* shared = cmd.add_flag("-s,--shared", o.shared,
                                "Hold LOCK_PATH shared, as a reader of its read-write lock (as flock -s): readers hold "
                                "it together, a writer (zklock run without --shared, or SharedMutex::lock()) alone; "
                                "not with --permits");
    cmd.add_flag("-x,--exclusive", o.exclusive,
                 "Hold LOCK_PATH exclusively: what zklock does without --shared (taken for flock -x)")
        ->excludes(shared);
    cmd.add_flag("-o,--close", o.close,
                 "Do not pass the lock's descriptors to CMD: zklock never does, its own are close-on-exec (taken for "
                 "flock -o)");
    cmd.add_option("--name", o.name,
                   "Store NAME in the lock node: zklock status shows it as the owner (default HOSTNAME:PID)")
        ->type_name("NAME")
        ->check(CLI::Validator([](std::string& t) { return t.empty() ? std::string("must not be empty") : ""; }, ""));
    add_names_option(cmd, o.names, "lock node");
    cmd.add_flag("--revocable", o.revocable,
                 "Let go when asked: a revocation request (zklock revoke, Curator's Revoker.attemptRevoke) releases "
                 "the lock and exits 79 (run stops CMD first, as on loss); without it a request is ignored");
    cmd.add_flag("-v,--verbose", o.verbose, "Report waiting, acquiring and releasing on stderr");
    cmd.add_option("LOCK_PATH", o.path, "Lock znode, e.g. /locks/nightly-report")->required();
}

// Registers run or lock: `footer`, then the exit statuses both give; the
// options both take; the callback. The caller adds what is its own.
CLI::App* add_hold_command(CLI::App& app, int& exit_code, const std::shared_ptr<run_options>& o, const char* name,
                           const char* description, const std::string& footer) {
    auto* cmd = app.add_subcommand(name, description);
    cmd->footer(footer +
                "64 bad arguments (a malformed connect string too), lock path or auth file, or a semaphore with a\n"
                "different number of permits;\n"
                "69 no server reachable (the message says what each server gave: connection refused, unreachable, "
                "no answer), or no host of the connect string resolves (an unknown name, or no answer from DNS);\n"
                "77 not authorized, authentication refused, or a lock directory with a more open ACL than --acl;\n"
                "78 the connect string's chroot does not exist;\n"
                "80-83 TLS failed (--tls-ca): 80 the handshake (not a TLS port, the client certificate refused), 81 "
                "a server certificate no trusted CA signed, 82 an expired one, 83 one for another host.");
    add_hold_options(*cmd, *o);
    cmd->callback([o, &exit_code] { exit_code = run_command(*o); });
    return cmd;
}

} // namespace

void add_run(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<run_options>();
    auto* cmd = add_hold_command(
        app, exit_code, o, "run", "Hold LOCK_PATH while CMD runs; exit with CMD's status",
        "Options go before LOCK_PATH; everything after -- is CMD, and the -- is required (as in zklock elect: a word\n"
        "after LOCK_PATH could be CMD or one more lock path; zklock run /x echo hi is refused, with the fix).\n"
        "CMD gets ZKLOCK_LOCK_NODE and ZKLOCK_FENCING_TOKEN in its environment (and not ZKLOCK_AUTH_FILE),\n"
        "descriptors 0-2 and those zklock inherited, nothing else.\n"
        "CMD can fence its writes with the token: zklock fence write RESOURCE < data (see zklock fence --help).\n"
        "With --permits K, LOCK_PATH is a semaphore: up to K holders at once (every participant must use the same K).\n"
        "Several lock paths (zklock run /a /b -- CMD; the -- is then required) are taken at once as one lock set,\n"
        "without deadlock whatever the order (one ZooKeeper transaction enqueues in every queue); ZKLOCK_LOCK_NODE\n"
        "then holds the set's nodes, a line each, and ZKLOCK_FENCING_TOKEN the set's token.\n"
        "--lock-delay TIME: after a holder is lost without releasing, wait TIME before holding (every participant\n"
        "should use the same TIME).\n"
        "--repeat N runs CMD N times (0: until stopped), holding LOCK_PATH each turn: between turns one transaction\n"
        "hands the lock on and queues again, so every waiter goes first; CMD sees its turn (1-based) in ZKLOCK_TURN.\n"
        "Every TIME (-w, --lock-delay, --grace, --session-timeout, --connect-timeout) is milliseconds (500) or a\n"
        "number with a unit (500ms, 1.5s, 2m, 1h): -w 5 waits 5 ms, where flock -w 5 waits 5 s; a plain number from\n"
        "1 to 999 gets a note on stderr that says so (--connect-timeout 5 is 5 ms; for 5 seconds write 5s).\n"
        "From flock: -n, -w, -s, -E as there; -x and -o are taken and change nothing (the lock is exclusive unless\n"
        "--shared, and CMD never gets zklock's descriptors); flock's -c CMD is written -- sh -c CMD (-c is the\n"
        "connect string here).\n"
        "--names kazoo names the lock node as kazoo's Lock does, so that kazoo clients on LOCK_PATH wait for it\n"
        "(curator: as Curator's InterProcessMutex, the same as zklock's); zklock waits for every peer's nodes anyway.\n"
        "Not with --permits: a semaphore writes only zklock's names.\n"
        "Exit status: CMD's (128+N if killed by signal N); 75 (or -E N) lock not acquired (-n, -w), CMD not run;\n"
        "75 a persistent node blocks the queue (the message says how to remove it);\n"
        "76 lock lost while CMD ran (CMD was stopped: SIGTERM, then SIGKILL after --grace), or no longer certainly\n"
        "held: nothing heard from ZooKeeper for the session timeout less 1%, before the server may expire the\n"
        "session (Lock::safe_for(); CMD is stopped then too);\n"
        "79 revoked (--revocable): a revocation request came while CMD ran (zklock revoke LOCK_PATH, Curator's\n"
        "Revoker); CMD was stopped as on loss and the lock released;\n"
        "126/127 CMD not executable / not found;\n"
        "128+N zklock got signal N (forwarded to CMD while it runs, unless the terminal sent it to both, as Ctrl-C\n"
        "does). If zklock dies, the kernel kills CMD;\n");
    // Read here, in base 10 (CLI11's conversion would take 010 as octal) and
    // within range (a number past it would saturate to "almost forever").
    cmd->add_option_function<std::string>(
           "--repeat",
           [o = o.get()](const std::string& t) {
               const auto n = whole_number<long long>(t);
               if (!n) throw CLI::ValidationError("--repeat", "must be a whole number, 0 (until stopped) or more, not " + t);
               o->repeat = *n;
           },
           "Run CMD N times (0: until stopped), holding LOCK_PATH each time; between turns the lock is handed on and "
           "queued for again in one transaction, so every waiter goes first. CMD sees its turn (1-based) in "
           "ZKLOCK_TURN; -n and -w bound each turn's wait (with -n, a turn that finds the lock taken ends the loop "
           "with 75); a CMD that fails ends the loop with its status")
        ->type_name("N");
    add_duration_option(*cmd, "--grace", o->grace_ms, "After SIGTERM to CMD, wait TIME before SIGKILL",
                        {milliseconds(0), max_wait});
    cmd->add_option("CMD", o->words, "More lock paths, then -- and the command and its arguments")->required();
    cmd->positionals_at_end();
}

void add_lock(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<run_options>();
    o->hold_only = true;
    add_hold_command(
        app, exit_code, o, "lock", "Hold LOCK_PATH until SIGINT, SIGTERM or SIGHUP (as etcdctl lock NAME)",
        "Once granted, prints ZKLOCK_LOCK_NODE=NODE and ZKLOCK_FENCING_TOKEN=TOKEN on stdout (one line each) and\n"
        "holds the lock until SIGINT, SIGTERM or SIGHUP; then releases it and exits 0. The same options as run.\n"
        "A stop signal ignored when zklock starts stays ignored (as nohup and POSIX shells mean it): a background\n"
        "job of a script (zklock lock PATH &) starts with SIGINT ignored, so Ctrl-C at the script does not release\n"
        "the lock; stop it with SIGTERM (kill PID), which works in every case.\n"
        "Exit status: 0 released after a signal; 75 (or -E N) not acquired (-n, -w), or a persistent node blocks\n"
        "the queue; 76 the lock was lost while held (session expired, node deleted); 79 revoked (--revocable: a\n"
        "revocation request came; the lock was released); 128+N signal N came while waiting (nothing is left\n"
        "behind);\n");
}

} // namespace zklock::cli
