// zklock elect: run a command only while this participant leads an election
// (campaign, run CMD as leader, stop it when leadership is lost, campaign again),
// and `zklock elect --observe`: follow who leads.
#include "arguments.hpp"
#include "commands.hpp"
#include "hold_text.hpp"
#include "supervisor.hpp"
#include "terminal_text.hpp"

#include <zklock/leader_election.hpp>
#include <zklock/session.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace zklock::cli {
namespace {
namespace asio = boost::asio;
using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;

struct elect_options {
    std::string connect;
    int session_timeout_ms = 10000;
    int grace_ms = 5000;
    int rejoin_delay_ms = 1000;
    bool once = false;
    bool verbose = false;
    bool observe = false;
    bool json = false;
    std::string names = "zklock";  // --names: how our election node is named
    milliseconds connect_timeout = default_connect_timeout;
    auth_options auth;
    std::string path;
    std::string id;
    std::vector<std::string> words;  // what CLI11 leaves after the ID
    std::vector<std::string> command;
};

// How long the resignation may take to commit before zklock exits anyway; closing
// the session on exit deletes the node all the same.
constexpr milliseconds resign_timeout{3000};

LeaderElectionOptions candidate_options(const std::string& names) {
    LeaderElectionOptions o;
    o.names = parse_node_names(names).value_or(node_names::zklock);
    return o;
}

// One `zklock elect ... -- CMD`.
class elector final : public supervisor {
public:
    elector(elect_options o, SessionOptions so)
        : supervisor(std::move(so), milliseconds(o.grace_ms), o.verbose),
          o_(std::move(o)),
          election_(session_, o_.path, o_.id, candidate_options(o_.names)),
          timer_(io_) {}

private:
    enum class phase { campaigning, leading, rejoin_delay, resigning };

    void on_stop(const stop_request& r) override {
        switch (phase_) {
        case phase::campaigning:
            // The campaign completes with operation_canceled once its node is gone.
            // Emitted here, on io_: the campaign's handler is bound to io_, and the
            // election detaches its cancellation handler on that executor.
            stop_signal_ = r.signal;
            campaign_cancel_->emit(asio::cancellation_type::terminal);
            break;
        case phase::leading:
            if (!stop_signal_) stop_signal_ = r.signal;
            // A signal the kernel sent to the whole group (Ctrl-C) reached CMD already.
            child_.stop(r.signal, !r.whole_group);  // its exit resigns and exits
            break;
        case phase::rejoin_delay:
            timer_.cancel();
            finish(128 + r.signal);
            break;
        case phase::resigning:
            break;
        }
    }

    void on_connected() override { campaign(); }

    void campaign() {
        phase_ = phase::campaigning;
        lost_ = false;
        if (o_.verbose) notice("campaigning in " + o_.path + " as " + shortened(o_.id));
        campaign_cancel_ = std::make_shared<asio::cancellation_signal>();
        election_.async_campaign(asio::bind_cancellation_slot(
            campaign_cancel_->slot(),
            asio::bind_executor(io_, [this](std::error_code ec, Leadership term) { on_elected(ec, std::move(term)); })));
    }

    void on_elected(std::error_code ec, Leadership term) {
        if (ec == std::errc::operation_canceled || (stop_signal_ && ec)) return finish(128 + stop_signal_);
        if (ec) return finish(report_failure(session_, "campaign in " + o_.path, ec, election_.failure_detail()));
        if (stop_signal_) return resign_and_exit(128 + stop_signal_);  // signalled as leadership arrived
        term_ = std::move(term);
        phase_ = phase::leading;
        term_started_ = clock_type::now();
        notice("leader of " + o_.path + " as " + shortened(o_.id) + " (epoch " + std::to_string(term_.epoch) +
               ", node " + term_.node + "); starting command");
        election_.async_wait_lost(
            asio::bind_executor(io_, [this, epoch = term_.epoch](std::error_code e) { on_lost(e, epoch); }));
        const auto epoch = std::to_string(term_.epoch);
        const int err = child_.start(o_.command,
                                     {{"ZKLOCK_LEADER_EPOCH", epoch},
                                      {"ZKLOCK_LOCK_NODE", term_.node},
                                      {"ZKLOCK_FENCING_TOKEN", epoch}},
                                     [this](int status) { on_child_exit(status); });
        if (err) {
            // Campaigning again would fail the same way: give up.
            notice(shortened(o_.command[0]) + ": " + std::strerror(err));
            resign_and_exit(err == ENOENT ? 127 : 126);
        }
    }

    void on_lost(std::error_code ec, std::int64_t epoch) {
        // An empty code means we resigned; not_held, that it was lost before this
        // wait was registered.
        if (phase_ != phase::leading || epoch != term_.epoch || !ec || ec == std::errc::operation_canceled) return;
        lost_ = true;
        const auto why = ec == errc::not_held ? std::string(" before the command started")
                                              : ": " + loss_reason(ec, "election node");
        notice("leadership lost" + why + "; stopping the command");
        child_.stop(SIGTERM);
    }

    void on_child_exit(int status) {
        // Said once: with -v here, unless the line that says it resigned says it too.
        if (o_.verbose && (stop_signal_ || lost_ || o_.once)) notice("command " + describe_status(status));
        if (stop_signal_) return resign_and_exit(128 + stop_signal_);
        if (lost_) {
            if (o_.once) return finish(exit_lock_lost);
            notice("campaigning again in " + o_.path);
            return campaign();
        }
        if (o_.once) return resign_and_exit(shell_status(status));
        // Resign, then queue again at the end of the line. The resignation is
        // queued on the session before the new campaign, so it commits first.
        election_.resign();
        const auto term_length = clock_type::now() - term_started_;
        const auto delay = milliseconds(o_.rejoin_delay_ms) - std::chrono::duration_cast<milliseconds>(term_length);
        notice("command " + describe_status(status) + "; resigned, campaigning again" +
               (delay.count() > 0 ? " in " + std::to_string(delay.count()) + " ms" : std::string()));
        if (delay.count() <= 0) return campaign();
        // A command that ends at once must not spin the election.
        phase_ = phase::rejoin_delay;
        timer_.expires_after(delay);
        timer_.async_wait([this](boost::system::error_code e) {
            if (!e && phase_ == phase::rejoin_delay) campaign();
        });
    }

    void resign_and_exit(int code) {
        phase_ = phase::resigning;
        exit_code_ = code;
        timer_.expires_after(resign_timeout);
        timer_.async_wait([this](boost::system::error_code ec) {
            if (ec || finished()) return;
            notice("resignation from " + o_.path + " not confirmed within " + std::to_string(resign_timeout.count()) +
                   " ms; exiting (the session's end deletes the node)");
            finish(exit_code_);
        });
        election_.async_resign(asio::bind_executor(io_, [this](std::error_code ec) {
            if (finished()) return;
            if (ec == errc::not_held || is_lock_lost(ec)) {
                if (!stop_signal_) {
                    // Lost while the command ran; the notice had not arrived yet.
                    notice("leadership lost before the command ended" +
                           (is_lock_lost(ec) ? ": " + loss_reason(ec, "election node") : std::string()));
                    exit_code_ = exit_lock_lost;
                }
            } else if (ec) {
                notice("resignation from " + o_.path + ": " + ec.message());
            } else if (o_.verbose) {
                notice("resigned from " + o_.path);
            }
            finish(exit_code_);
        }));
    }

    elect_options o_;
    LeaderElection election_;  // destroyed before the session it uses
    // Shared: an emit posted to the session's executor may run after we are gone.
    std::shared_ptr<asio::cancellation_signal> campaign_cancel_;
    asio::steady_timer timer_;

    phase phase_ = phase::campaigning;
    Leadership term_;
    clock_type::time_point term_started_;
    int stop_signal_ = 0;
    bool lost_ = false;
    int exit_code_ = 1;
};

// `zklock elect --observe`: prints the leader, then every change, until a signal.
class observer final : public supervisor {
public:
    observer(elect_options o, SessionOptions so)
        : supervisor(std::move(so), milliseconds(0), o.verbose), o_(std::move(o)), election_(session_, o_.path, "") {}

private:
    int stopped_status(int) const override { return 0; }

    void on_stop(const stop_request&) override {
        stopping_ = true;
        // Completes on io_ and detaches its cancellation handler there.
        cancel_.emit(asio::cancellation_type::terminal);
    }

    void on_connected() override {
        // async_wait_leader_change(nullopt) waits for a leader when there is none:
        // read the current one first, so that "no leader" is printed too.
        std::error_code ec;
        auto current = election_.leader(ec);
        if (ec) return finish(report_failure(session_, "read the leader of " + o_.path, ec));
        print(current);
        wait(std::move(current));
    }

    void wait(std::optional<LeaderInfo> known) {
        if (stopping_) return finish(0);
        election_.async_wait_leader_change(
            std::move(known),
            asio::bind_cancellation_slot(cancel_.slot(),
                                         asio::bind_executor(io_, [this](std::error_code ec, std::optional<LeaderInfo> now) {
                                             if (ec == std::errc::operation_canceled || stopping_) return finish(0);
                                             if (ec)
                                                 return finish(report_failure(session_, "watch the leader of " + o_.path, ec));
                                             print(now);
                                             wait(std::move(now));
                                         })));
    }

    // Participant ids are any bytes: JSON replaces invalid UTF-8, text escapes
    // what a terminal would act on.
    void print(const std::optional<LeaderInfo>& leader) const {
        if (o_.json) {
            nlohmann::ordered_json line;
            if (leader) {
                line["leader"] = leader->participant_id;
                line["epoch"] = leader->epoch;
                line["node"] = leader->node;
            } else {
                line["leader"] = nullptr;
                line["epoch"] = nullptr;
                line["node"] = nullptr;
            }
            std::cout << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << std::endl;
        } else if (leader) {
            std::cout << "leader " << escape_control(leader->participant_id) << " epoch " << leader->epoch << " node "
                      << escape_control(leader->node) << std::endl;
        } else {
            std::cout << "no leader" << std::endl;
        }
    }

    elect_options o_;
    LeaderElection election_;
    asio::cancellation_signal cancel_;
    bool stopping_ = false;
};

std::string default_participant_id() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || !*host) std::strcpy(host, "localhost");
    return std::string(host) + ":" + std::to_string(::getpid());
}

// Sorts out the words after ELECTION_PATH. CLI11 (positionals_at_end) gives the
// first to ID, whatever it is: "--" when the user wrote no ID ("/e -- cmd"), an
// option written after the path ("/e --once -- cmd"), or the ID itself.
// Returns false after telling what is wrong.
bool sort_out_positionals(elect_options& o) {
    const auto misplaced = [&](const std::vector<std::string>& positionals, const trailing_words& words) {
        notice(misplaced_option_hint("zklock elect", "ELECTION_PATH", positionals, words));
        return false;
    };
    if (o.id == "--") {  // no ID: everything after the -- is the command, as written
        o.id.clear();
        o.command = std::move(o.words);
        return true;
    }
    if (o.id.size() > 1 && o.id.front() == '-') {
        std::vector<std::string> all{o.id};
        all.insert(all.end(), o.words.begin(), o.words.end());
        return misplaced({o.path}, split_trailing(std::move(all)));
    }
    if (o.observe) {  // no command: elect_command refuses any
        if (!o.words.empty() && o.words.front() == "--") o.words.erase(o.words.begin());
        o.command = std::move(o.words);
        return true;
    }
    // An ID and no "--" after it: a command without its "--", whose first word
    // became the ID ("/e ./loop.sh", "/e id true"). Refused, whichever was meant.
    if (!o.id.empty() && (o.words.empty() || o.words.front() != "--")) {
        const auto rest = split_trailing(o.words);
        if (!rest.misplaced.empty()) return misplaced({o.path, o.id}, rest);
        std::string said = "elect: CMD goes after -- (zklock elect ELECTION_PATH [ID] -- CMD [ARGS...]); without it '" +
                           shortened(o.id) + "' would be the ID";
        if (!o.words.empty()) said += " and '" + shortened(o.words.front()) + "' the command";
        notice(said);
        return false;
    }
    auto words = split_trailing(std::move(o.words));
    if (!words.misplaced.empty()) return misplaced({o.path, o.id}, words);
    o.command = std::move(words.command);
    return true;
}

int elect_command(elect_options o) {
    if (!sort_out_positionals(o)) return exit_usage;
    if (o.observe) {
        if (!o.id.empty() || !o.command.empty()) {
            notice("elect --observe takes only ELECTION_PATH (zklock elect --observe ELECTION_PATH)");
            return exit_usage;
        }
    } else if (o.command.empty()) {
        notice("elect: no command given (zklock elect ELECTION_PATH [ID] -- CMD [ARGS...])");
        return exit_usage;
    }
    if (const auto problem = lock_path_problem(o.path); !problem.empty()) {
        notice(problem);
        return exit_usage;
    }
    if (!o.observe && o.id.empty()) o.id = default_participant_id();
    auto so = session_options_of(o.connect, o.connect_timeout, o.auth);
    if (!so) return exit_usage;
    so->session_timeout = milliseconds(o.session_timeout_ms);
    if (o.observe) {
        observer obs(std::move(o), std::move(*so));
        return obs.run();
    }
    elector e(std::move(o), std::move(*so));
    return e.run();
}

} // namespace

void add_elect(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<elect_options>();
    auto* cmd = app.add_subcommand("elect", "Run CMD only while leading ELECTION_PATH as ID; or --observe the leader");
    cmd->footer(
        "Options go before ELECTION_PATH; CMD comes after -- (always: without it, CMD's first word would be taken\n"
        "for the ID, so that is refused). ID defaults to HOSTNAME:PID. Every TIME is milliseconds (500) or a\n"
        "number with a unit (500ms, 1.5s, 2m, 1h); a plain number from 1 to 999 gets a note on stderr that says\n"
        "it is milliseconds. The leader's CMD\n"
        "gets ZKLOCK_LEADER_EPOCH (= ZKLOCK_FENCING_TOKEN: grows with every new leader) and ZKLOCK_LOCK_NODE (not\n"
        "ZKLOCK_AUTH_FILE), descriptors 0-2 and those zklock inherited. When leadership is lost, CMD is stopped\n"
        "(SIGTERM, then SIGKILL after --grace) and zklock campaigns again; when CMD exits, zklock resigns and\n"
        "campaigns again. With --once: one term only; exit with CMD's status, or 76 if leadership was lost.\n"
        "Exit status otherwise: 128+N zklock got signal N (forwarded to CMD unless the terminal sent it to both, as\n"
        "Ctrl-C does; then it resigns); 64 bad arguments (a malformed connect string too) or auth file; 69 no\n"
        "server reachable (connection refused, unreachable or no answer, as the message says), or no host of the\n"
        "connect string resolves; 75 a persistent node\n"
        "blocks the queue (the message says how to remove it); 77 not authorized, authentication refused, or an\n"
        "election directory with a more open ACL than --acl; 78 the connect string's chroot does not exist;\n"
        "126/127 CMD not executable / not found.\n"
        "--names curator names the election node as Curator's LeaderLatch does (kazoo: as kazoo's Election), so\n"
        "that those peers on ELECTION_PATH wait for zklock's leader; the default is what Curator's LeaderSelector\n"
        "counts. zklock waits for every peer's nodes anyway.\n"
        "--observe prints the leader and every change (`leader ID epoch N node NODE` or `no leader`, control\n"
        "characters escaped; --json: one object per line, invalid UTF-8 replaced) until SIGINT/SIGTERM, then exits 0.");
    add_connect_option(*cmd, o->connect);
    add_auth_options(*cmd, o->auth);
    add_connect_timeout_option(*cmd, o->connect_timeout);
    add_duration_option(*cmd, "--session-timeout", o->session_timeout_ms,
                        "Requested ZooKeeper session timeout (the server keeps it within 2 and 20 ticks)",
                        {milliseconds(1), max_wait});
    auto* observe = cmd->add_flag("--observe", o->observe, "Print the leader and every change instead of campaigning");
    cmd->get_option("--acl")->excludes(observe);
    cmd->add_flag("--json", o->json, "With --observe: one JSON object per line")->needs(observe);
    add_duration_option(*cmd, "--grace", o->grace_ms, "After SIGTERM to CMD, wait TIME before SIGKILL",
                        {milliseconds(0), max_wait})
        ->excludes(observe);
    add_duration_option(*cmd, "--rejoin-delay", o->rejoin_delay_ms,
                        "After CMD exits by itself, campaign again no sooner than TIME after the term began",
                        {milliseconds(0), max_wait})
        ->excludes(observe);
    add_names_option(*cmd, o->names, "election node");
    cmd->get_option("--names")->excludes(observe);
    cmd->add_flag("--once", o->once, "Lead at most once: exit with CMD's status (76 if leadership was lost)")
        ->excludes(observe);
    cmd->add_flag("-v,--verbose", o->verbose, "Report campaigning, resigning and CMD's exit on stderr");
    cmd->add_option("ELECTION_PATH", o->path, "Election znode, e.g. /elections/scheduler")->required();
    cmd->add_option("ID", o->id, "This participant's id, shown to observers (default HOSTNAME:PID)");
    cmd->add_option("CMD", o->words, "Command and arguments (after --)");
    cmd->positionals_at_end();
    cmd->callback([o, &exit_code] { exit_code = elect_command(*o); });
}

} // namespace zklock::cli
