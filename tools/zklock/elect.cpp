// zklock elect: run a command only while this participant leads an election
// (campaign, run CMD as leader, stop it when leadership is lost, campaign again),
// and `zklock elect --observe`: follow who leads.
#include "commands.hpp"

#include <zklock/detail/path.hpp>
#include <zklock/leader_election.hpp>
#include <zklock/session.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <nlohmann/json.hpp>

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
    std::string path;
    std::string id;
    std::vector<std::string> command;
};

constexpr milliseconds connect_timeout{15000};
// How long the resignation may take to commit before zklock exits anyway; closing
// the session on exit deletes the node all the same.
constexpr milliseconds resign_timeout{3000};

SessionOptions session_options(const elect_options& o) {
    SessionOptions s;
    s.connect = o.connect;
    s.session_timeout = milliseconds(o.session_timeout_ms);
    s.connect_timeout = connect_timeout;
    return s;
}

// The exit status for a failed connect, after telling why.
int connect_failure(const elect_options& o, std::error_code ec) {
    if (ec == errc::timeout) {
        notice("could not connect to " + o.connect + " within " + std::to_string(connect_timeout.count()) + " ms");
    } else if (ec == errc::invalid_argument) {
        notice("invalid connect string '" + o.connect + "'");
        return exit_usage;
    } else {
        notice("could not connect to " + o.connect + ": " + ec.message());
    }
    return exit_unavailable;
}

// One `zklock elect ... -- CMD`: everything happens on io_ in the main thread; the
// Session runs its own thread and posts completions here.
class elector {
public:
    explicit elector(elect_options o)
        : o_(std::move(o)),
          handled_signals_(stop_signals()),
          signals_(io_),
          session_(session_options(o_)),
          election_(session_, o_.path, o_.id),
          child_(io_, milliseconds(o_.grace_ms), handled_signals_),
          timer_(io_) {}

    int run() {
        for (int sig : handled_signals_) signals_.add(sig);
        wait_for_signal();
        if (o_.verbose) notice("connecting to " + o_.connect);
        session_.async_connect(asio::bind_cancellation_slot(
            connect_cancel_.slot(), asio::bind_executor(io_, [this](std::error_code ec) { on_connected(ec); })));
        io_.run();
        return exit_code_;
    }

private:
    enum class phase { connecting, campaigning, leading, rejoin_delay, resigning, done };

    void wait_for_signal() {
        signals_.async_wait([this](boost::system::error_code ec, int sig) {
            if (ec) return;
            on_signal(sig);
            wait_for_signal();
        });
    }

    void on_signal(int sig) {
        switch (phase_) {
        case phase::connecting:
            stop_signal_ = sig;
            connect_cancel_.emit(asio::cancellation_type::terminal);
            break;
        case phase::campaigning:
            // The campaign completes with operation_canceled once its node is gone.
            // Emitted here, on io_: the campaign's handler is bound to io_, and the
            // election detaches its cancellation handler on that executor.
            stop_signal_ = sig;
            campaign_cancel_->emit(asio::cancellation_type::terminal);
            break;
        case phase::leading:
            if (!stop_signal_) stop_signal_ = sig;
            child_.stop(sig);  // its exit resigns and exits
            break;
        case phase::rejoin_delay:
            timer_.cancel();
            finish(128 + sig);
            break;
        case phase::resigning:
        case phase::done:
            break;
        }
    }

    void on_connected(std::error_code ec) {
        if (ec == std::errc::operation_canceled) return finish(128 + stop_signal_);
        if (ec) return finish(connect_failure(o_, ec));
        campaign();
    }

    void campaign() {
        phase_ = phase::campaigning;
        lost_ = false;
        if (o_.verbose) notice("campaigning in " + o_.path + " as " + o_.id);
        campaign_cancel_ = std::make_shared<asio::cancellation_signal>();
        election_.async_campaign(asio::bind_cancellation_slot(
            campaign_cancel_->slot(),
            asio::bind_executor(io_, [this](std::error_code ec, Leadership term) { on_elected(ec, std::move(term)); })));
    }

    void on_elected(std::error_code ec, Leadership term) {
        if (ec == std::errc::operation_canceled || (stop_signal_ && ec)) return finish(128 + stop_signal_);
        if (ec) {
            notice("campaign in " + o_.path + " failed: " + ec.message());
            return finish(exit_unavailable);
        }
        if (stop_signal_) return resign_and_exit(128 + stop_signal_);  // signalled as leadership arrived
        term_ = std::move(term);
        phase_ = phase::leading;
        term_started_ = clock_type::now();
        notice("leader of " + o_.path + " as " + o_.id + " (epoch " + std::to_string(term_.epoch) + ", node " +
               term_.node + "); starting command");
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
            notice(o_.command[0] + ": " + std::strerror(err));
            resign_and_exit(err == ENOENT ? 127 : 126);
        }
    }

    void on_lost(std::error_code ec, std::int64_t epoch) {
        // An empty code means we resigned; not_held, that it was lost before this
        // wait was registered.
        if (phase_ != phase::leading || epoch != term_.epoch || !ec || ec == std::errc::operation_canceled) return;
        lost_ = true;
        notice("leadership lost (" +
               (ec == errc::not_held ? std::string("before the command started") : ec.message()) +
               "); stopping command");
        child_.stop(SIGTERM);
    }

    void on_child_exit(int status) {
        if (o_.verbose) notice("command " + describe_status(status));
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
            if (ec || phase_ == phase::done) return;
            notice("resignation from " + o_.path + " not confirmed within " + std::to_string(resign_timeout.count()) +
                   " ms; exiting (the session's end deletes the node)");
            finish(exit_code_);
        });
        election_.queue().async_unlock(asio::bind_executor(io_, [this](std::error_code ec) {
            if (phase_ == phase::done) return;
            if (ec == errc::not_held) {
                if (!stop_signal_) {
                    // Lost while the command ran; the notice had not arrived yet.
                    notice("leadership lost before the command ended");
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

    void finish(int code) {
        phase_ = phase::done;
        exit_code_ = code;
        io_.stop();
    }

    elect_options o_;
    // io_ outlives the session: the session's thread posts completions to it
    // until the session is destroyed.
    asio::io_context io_{1};
    // Completions come from the session's thread: io_ runs until finish() stops it.
    asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
    std::vector<int> handled_signals_;
    asio::signal_set signals_;
    Session session_;
    LeaderElection election_;  // destroyed before the session it uses
    asio::cancellation_signal connect_cancel_;
    // Shared: an emit posted to the session's executor may run after we are gone.
    std::shared_ptr<asio::cancellation_signal> campaign_cancel_;
    command_child child_;
    asio::steady_timer timer_;

    phase phase_ = phase::connecting;
    Leadership term_;
    clock_type::time_point term_started_;
    int stop_signal_ = 0;
    bool lost_ = false;
    int exit_code_ = 1;
};

// `zklock elect --observe`: prints the leader, then every change, until a signal.
class observer {
public:
    explicit observer(elect_options o)
        : o_(std::move(o)), signals_(io_), session_(session_options(o_)), election_(session_, o_.path, "") {}

    int run() {
        for (int sig : stop_signals()) signals_.add(sig);
        signals_.async_wait([this](boost::system::error_code ec, int) {
            if (ec) return;
            stopping_ = true;
            // Both complete on io_ and detach their cancellation handlers there.
            cancel_.emit(asio::cancellation_type::terminal);
        });
        session_.async_connect(asio::bind_cancellation_slot(
            cancel_.slot(), asio::bind_executor(io_, [this](std::error_code ec) { on_connected(ec); })));
        io_.run();
        return exit_code_;
    }

private:
    void on_connected(std::error_code ec) {
        if (ec == std::errc::operation_canceled || stopping_) return finish(0);
        if (ec) return finish(connect_failure(o_, ec));
        // async_wait_leader_change(nullopt) waits for a leader when there is none:
        // read the current one first, so that "no leader" is printed too.
        auto current = election_.leader(ec);
        if (ec) {
            notice("could not read the leader of " + o_.path + ": " + ec.message());
            return finish(exit_unavailable);
        }
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
                                             if (ec) {
                                                 notice("watching the leader of " + o_.path + ": " + ec.message());
                                                 return finish(exit_unavailable);
                                             }
                                             print(now);
                                             wait(std::move(now));
                                         })));
    }

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
            std::cout << line.dump() << std::endl;
        } else if (leader) {
            std::cout << "leader " << leader->participant_id << " epoch " << leader->epoch << " node " << leader->node
                      << std::endl;
        } else {
            std::cout << "no leader" << std::endl;
        }
    }

    void finish(int code) {
        exit_code_ = code;
        io_.stop();
    }

    elect_options o_;
    asio::io_context io_{1};
    // Completions come from the session's thread: io_ runs until finish() stops it.
    asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
    asio::signal_set signals_;
    Session session_;
    LeaderElection election_;
    asio::cancellation_signal cancel_;
    bool stopping_ = false;
    int exit_code_ = 1;
};

int elect_command(elect_options o) {
    if (!o.command.empty() && o.command.front() == "--") o.command.erase(o.command.begin());
    if (o.observe) {
        if (!o.id.empty() || !o.command.empty()) {
            std::cerr << "zklock: elect --observe takes only ELECTION_PATH (zklock elect --observe ELECTION_PATH)\n";
            return exit_usage;
        }
    } else if (o.id.empty() || o.command.empty()) {
        std::cerr << "zklock: elect: " << (o.id.empty() ? "no participant ID" : "no command")
                  << " given (zklock elect ELECTION_PATH ID -- CMD [ARGS...])\n";
        return exit_usage;
    }
    if (const auto check = detail::validate_lock_path(o.path); !check) {
        std::cerr << "zklock: " << check.reason << ": '" << o.path << "'\n";
        return exit_usage;
    }
    if (o.observe) {
        observer obs(std::move(o));
        return obs.run();
    }
    elector e(std::move(o));
    return e.run();
}

} // namespace

void add_elect(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<elect_options>();
    auto* cmd = app.add_subcommand("elect", "Run CMD only while leading ELECTION_PATH as ID; or --observe the leader");
    cmd->footer(
        "Options go before ELECTION_PATH. The leader's CMD gets ZKLOCK_LEADER_EPOCH (= ZKLOCK_FENCING_TOKEN: grows\n"
        "with every new leader) and ZKLOCK_LOCK_NODE. When leadership is lost, CMD is stopped (SIGTERM, then\n"
        "SIGKILL after --grace) and zklock campaigns again; when CMD exits, zklock resigns and campaigns again.\n"
        "With --once: one term only; exit with CMD's status, or 76 if leadership was lost.\n"
        "Exit status otherwise: 128+N zklock got signal N (forwarded to CMD, then it resigns); 64 bad arguments;\n"
        "69 no server reachable; 126/127 CMD not executable / not found.\n"
        "--observe prints the leader and every change (`leader ID epoch N node NODE` or `no leader`; --json: one\n"
        "object per line) until SIGINT/SIGTERM, then exits 0.");
    add_connect_option(*cmd, o->connect);
    cmd->add_option("--session-timeout", o->session_timeout_ms, "Requested ZooKeeper session timeout in ms")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    auto* observe = cmd->add_flag("--observe", o->observe, "Print the leader and every change instead of campaigning");
    cmd->add_flag("--json", o->json, "With --observe: one JSON object per line")->needs(observe);
    cmd->add_option("--grace", o->grace_ms, "After SIGTERM to CMD, wait this long before SIGKILL (ms)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber)
        ->excludes(observe);
    cmd->add_option("--rejoin-delay", o->rejoin_delay_ms,
                    "After CMD exits by itself, campaign again no sooner than MS ms after the term began")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber)
        ->excludes(observe);
    cmd->add_flag("--once", o->once, "Lead at most once: exit with CMD's status (76 if leadership was lost)")
        ->excludes(observe);
    cmd->add_flag("-v,--verbose", o->verbose, "Report campaigning, resigning and CMD's exit on stderr");
    cmd->add_option("ELECTION_PATH", o->path, "Election znode, e.g. /elections/scheduler")->required();
    cmd->add_option("ID", o->id, "This participant's id, shown to observers");
    cmd->add_option("CMD", o->command, "Command and arguments (after --)");
    cmd->positionals_at_end();
    cmd->callback([o, &exit_code] { exit_code = elect_command(*o); });
}

} // namespace zklock::cli
