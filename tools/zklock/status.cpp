// zklock status: the queue of one or more locks, holder first; with --watch,
// again after every change until a stop signal.
#include "commands.hpp"
#include "status_view.hpp"
#include "stop_signals.hpp"
#include "terminal_text.hpp"

#include <zklock/mutex.hpp>
#include <zklock/queue_watch.hpp>
#include <zklock/session.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include <unistd.h>

namespace zklock::cli {
namespace {

namespace asio = boost::asio;

struct status_options {
    std::string connect;
    std::chrono::milliseconds connect_timeout = default_connect_timeout;
    bool json = false;
    bool watch = false;
    bool short_w = false;  // -w: --watch's old short name
    std::string output;    // -o: "wide", or empty
    auth_options auth;
    std::vector<std::string> paths;
};

// Node data is any bytes: invalid UTF-8 becomes U+FFFD instead of failing the dump.
std::string dumped(const nlohmann::ordered_json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

int listing_failure(const Session& session, const std::string& path, const std::error_code& ec) {
    if (ec == errc::no_auth)
        return report_failure(session, "list " + path, ec,
                              "not authorized: " + session.identity() + " may not read " + path +
                                  " (its ACL does not grant this identity r)");
    return report_failure(session, "list " + path, ec);
}

// The time of a change as a watch prints it: 2026-11-25T23:59:01.123Z.
std::string utc_stamp(std::int64_t ms) {
    const std::time_t s = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    ::gmtime_r(&s, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
    return buf;
}

struct shown_queue {
    std::string path;
    queue_listing listing;
    std::size_t permits = 1;
};

// exit_no_lock_path when a path of `shown` does not exist (all are shown first).
int status_of(const std::vector<shown_queue>& shown) {
    for (const auto& q : shown)
        if (!q.listing.path_exists) return exit_no_lock_path;
    return 0;
}

// ctime is the server's clock: ages are off by the clock difference, if any.
int status_once(const status_options& o, Session& session) {
    std::vector<shown_queue> shown;
    for (const auto& path : o.paths) {
        std::error_code ec;
        auto listing = list_queue(session, path, ec);
        if (ec) return listing_failure(session, path, ec);
        const auto permits = permits_of(session, path, listing, ec);
        if (ec) return listing_failure(session, path, ec);
        shown.push_back({path, std::move(listing), permits});
    }
    const auto now = now_ms();
    if (o.json) {
        // One path: its object; several: an array of them.
        auto all = nlohmann::ordered_json::array();
        for (const auto& q : shown) all.push_back(status_json(q.path, q.listing, q.permits, now));
        std::cout << dumped(all.size() == 1 ? all[0] : all, 2) << std::endl;
        for (const auto& q : shown)
            for (const auto& note : persistent_notes(q.path, q.listing, o.connect)) notice(note);
        return status_of(shown);
    }
    for (std::size_t i = 0; i < shown.size(); ++i)
        std::cout << (i ? "\n" : "") << status_text(shown[i].path, shown[i].listing, shown[i].permits, o.connect, now,
                                                        o.output == "wide");
    std::cout << std::flush;
    return status_of(shown);
}

// --watch: one QueueWatch per path on this thread's io_context. On a terminal
// the screen is redrawn on every change and each second (the ages); otherwise
// each change prints one block (--json: one line) for the path that changed.
class status_watch {
public:
    status_watch(const status_options& o, Session& session, asio::io_context& io, stop_signal_watch& stops)
        : o_(o), session_(session), io_(io), stops_(stops), redraw_(io),
          screen_(!o.json && ::isatty(STDOUT_FILENO) == 1) {
        for (const auto& path : o.paths) locks_.push_back({std::make_unique<QueueWatch>(session, path), {}});
    }

    int run() {
        stops_.watch([this](stop_request) { stop(); });
        for (std::size_t i = 0; i < locks_.size(); ++i) next(i);
        if (screen_) tick();
        io_.run();
        return status_;
    }

private:
    struct followed {
        std::unique_ptr<QueueWatch> watch;
        std::optional<queue_listing> shown;
        std::size_t permits = 1;  // of the listing shown (permits_of())
    };

    void stop() {
        for (auto& l : locks_) l.watch->cancel();
        redraw_.cancel();
        io_.stop();
    }

    void next(std::size_t i) {
        locks_[i].watch->async_next(asio::bind_executor(io_, [this, i](std::error_code ec, queue_listing listing) {
            if (ec == std::errc::operation_canceled) return;
            if (ec) {
                status_ = listing_failure(session_, o_.paths[i], ec);
                return stop();
            }
            auto& l = locks_[i];
            if (!l.shown || !same_queue(*l.shown, listing)) {
                // A blocking read here, on this thread: the session runs its own.
                l.permits = permits_of(session_, o_.paths[i], listing, ec);
                if (ec) {
                    status_ = listing_failure(session_, o_.paths[i], ec);
                    return stop();
                }
                l.shown = std::move(listing);
                show(i);
            }
            next(i);
        }));
    }

    void show(std::size_t i) {
        const auto now = now_ms();
        const auto& path = o_.paths[i];
        const auto& listing = *locks_[i].shown;
        const auto permits = locks_[i].permits;
        if (screen_) return draw();
        if (o_.json) {
            auto j = status_json(path, listing, permits, now);
            j["at_ms"] = now;
            std::cout << dumped(j, -1) << std::endl;
            for (const auto& note : persistent_notes(path, listing, o_.connect)) notice(note);
            return;
        }
        std::cout << "@ " << utc_stamp(now) << "\n"
                  << status_text(path, listing, permits, o_.connect, now, o_.output == "wide") << std::endl;
    }

    // The whole screen: every lock's queue as it was last listed.
    void draw() {
        const auto now = now_ms();
        std::string out = "\x1b[H\x1b[2J";  // home, clear
        out += "zklock status --watch, " + utc_stamp(now) + " (redrawn on every change; Ctrl-C quits)\n";
        for (std::size_t i = 0; i < locks_.size(); ++i) {
            out += "\n";
            out += locks_[i].shown ? status_text(o_.paths[i], *locks_[i].shown, locks_[i].permits, o_.connect, now,
                                                 o_.output == "wide")
                                   : escape_control(o_.paths[i]) + ": listing...\n";
        }
        std::cout << out << std::flush;
    }

    void tick() {
        redraw_.expires_after(std::chrono::seconds(1));
        redraw_.async_wait([this](boost::system::error_code ec) {
            if (ec) return;
            draw();
            tick();
        });
    }

    const status_options& o_;
    Session& session_;
    asio::io_context& io_;
    stop_signal_watch& stops_;
    asio::steady_timer redraw_;
    const bool screen_;
    std::vector<followed> locks_;
    int status_ = 0;
};

int status_command(status_options o) {
    for (const auto& path : o.paths)
        if (const auto problem = lock_path_problem(path); !problem.empty()) {
            notice(problem);
            return exit_usage;
        }
    if (o.short_w) {
        // Old scripts keep working; a flock user learns why -w is not a wait here.
        notice("status -w is the old short name of --watch: write -W or --watch (-w is a wait TIME in zklock run "
               "and lock, as in flock)");
        o.watch = true;
    }
    const auto so = session_options_of(o.connect, o.connect_timeout, o.auth);
    if (!so) return exit_usage;
    asio::io_context io;
    // Before the Session: its thread inherits the blocked stop signals.
    std::optional<stop_signal_watch> stops;
    if (o.watch) stops.emplace(io);
    Session session(*so);
    std::error_code ec;
    session.connect(ec);
    if (ec) return report_connect_failure(session, ec);
    if (!o.watch) return status_once(o, session);
    return status_watch(o, session, io, *stops).run();
}

} // namespace

void add_status(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<status_options>();
    auto* cmd = app.add_subcommand("status", "Show the queue of one or more locks: holder first, then waiters in order");
    cmd->footer(
        "The queue holds the contenders of every dialect zklock reads (zklock, curator, kazoo, go-zookeeper,\n"
        "c-recipe; docs/interop.md): DIALECT says who made each node, KIND whether it holds alone (exclusive) or\n"
        "with other readers (shared); a line says when the queue mixes dialects, and children no dialect\n"
        "recognises are listed apart as foreign.\n"
        "OWNER is the node's data: the name given to zklock run --name or zklock lock --name (\"<host>:<pid>\" by\n"
        "default), an election candidate's id, a peer client's data; a pending revocation request (zklock revoke,\n"
        "Curator's Revoker) replaces it and shows as [revocation requested], with a note under the table (--json:\n"
        "\"revocation_requested\": true). SESSION is the session that holds the node,\n"
        "or `persistent` for a node no session end deletes (a note says how to remove it). Node names and data are\n"
        "shown with control characters escaped (\\x1b); --json replaces invalid UTF-8, gives the data as both\n"
        "\"owner\" and \"data\", and marks such nodes \"persistent\": true.\n"
        "The line above the table says which positions hold: the first (a lock, an election); the readers ahead of\n"
        "the first writer, or that writer (a read-write lock: zklock run --shared, SharedMutex); the first K (a\n"
        "semaphore of K permits, zklock run --permits K: K is read from the lock's data). --json gives each\n"
        "contender \"holds\" (and a semaphore's \"permits\").\n"
        "The table fits 100 columns: DIALECT only when the queue mixes dialects, KIND only when it holds readers,\n"
        "node names cut to their end (...-lock-0000000007) and owners to the rest of the line; -o wide shows every\n"
        "column and cuts nothing (--json gives everything too).\n"
        "--watch (-W) follows the queues until SIGINT, SIGTERM or SIGHUP (exit status 0): one child watch per lock on\n"
        "the server, no polling. On a terminal it redraws the screen on every change and each second; otherwise\n"
        "it prints one block per change, for the lock that changed, after a line \"@ <UTC time>\" (with --json,\n"
        "one object per line, with \"at_ms\"). It keeps waiting while no server is reachable. -w, its old short\n"
        "name, still works and says so on stderr: -w is a wait TIME in zklock run and lock, as in flock.\n"
        "A lock path that does not exist on the server says so (--json: \"exists\": false) and makes the exit status\n"
        "66: a mistyped path, or an idle lock whose empty node the server removed (zklock makes a lock's node as a\n"
        "container, which the server deletes once it is empty). --watch shows it so, then the queue as it changes.\n"
        "Exit status: 0 (also when nobody holds the lock, while its node exists); 66 a lock path does not exist (the\n"
        "others are shown too); 64 bad arguments (a malformed connect string too), lock path or auth file; 69 no server reachable\n"
        "(the message says what each server gave: connection refused, unreachable, no answer), or no host of the\n"
        "connect string resolves; 78 the chroot of the connect string does not exist;\n"
        "77 not authorized to read the lock (its ACL does not grant the auth file's identity r), or authentication\n"
        "refused.");
    add_connect_option(*cmd, o->connect);
    add_auth_options(*cmd, o->auth, false);
    add_connect_timeout_option(*cmd, o->connect_timeout);
    auto* json = cmd->add_flag("--json", o->json,
                  "Print one JSON object per lock: {path, exists, contenders: [{position, node, dialect, kind, "
                  "owner, ...}], dialects, mixed_dialects, foreign} (several locks: an array of them)");
    cmd->add_flag("-W,--watch", o->watch, "Show the queues again after every change, until a stop signal");
    // -w was --watch's short name before run's -w (a wait, as flock's) made it
    // one letter with two meanings: still taken, not listed, with a note.
    cmd->add_flag("-w", o->short_w, "The old short name of --watch")->group("");
    cmd->add_option("-o,--output", o->output,
                    "wide: every column (DIALECT and KIND too), node names and owners whole; the default table fits "
                    "100 columns")
        ->type_name("FORMAT")
        ->check(CLI::IsMember({"wide"}))
        ->excludes(json);
    cmd->add_option("LOCK_PATH", o->paths, "Lock znodes, e.g. /locks/nightly-report")->required();
    cmd->callback([o, &exit_code] { exit_code = status_command(*o); });
}

} // namespace zklock::cli
