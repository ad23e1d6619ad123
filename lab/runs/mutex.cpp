// zklock bench uncontended | contended | all: zklock's runs of the mutex
// scenarios, the C client's floor beside each (runs/floor.hpp) and the peers'
// runs (Curator's harness, kazoo's client); and the scenarios once per serving
// server (the bench's own standalone server or ensemble, or -c's,
// ensemble/servers.hpp): warm-up against that server, then per scenario
// zklock's run, the floor and the peers asked for, each row tagged with the
// server's role, the ensemble's size and --busy; with --report (and
// --ensemble) the peers report of them all.
#include "bench.hpp"
#include "common.hpp"
#include "ensemble/plan.hpp"
#include "ensemble/server_work.hpp"
#include "ensemble/servers.hpp"
#include "report/peers.hpp"
#include "runs/busy.hpp"
#include "runs/floor.hpp"
#include "runs/requeue.hpp"
#include "runs/rounds.hpp"
#include "runs/run.hpp"
#include "runs/zookeeper.hpp"

#include <zklock/error.hpp>
#include <zklock/lock.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <nlohmann/json.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <charconv>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace zklock::cli::zkbench {
namespace {

// The options of zklock's run of a mutex scenario.
scenario_options mutex_run(const bench_options& o) {
    scenario_options r;
    r.backend = "zookeeper";
    r.ops = o.ops;
    r.confirm_unlock = o.confirm_unlock;
    return r;
}

// How zklock's row was run, beside its figures.
bench_result& mark_options(bench_result& r, const bench_options& o) {
    if (o.naive) r.extra["naive"] = true;
    if (o.confirm_unlock) r.extra["confirm_unlock"] = true;
    return r;
}

// A number of zoo.cfg lines (the server's default when none sets it), or the
// text as given when it is none.
nlohmann::json cfg_number(const std::vector<std::string>& lines, const char* key, int server_default) {
    const auto text = zoo_cfg_value(lines, key);
    if (!text) return server_default;
    int n = 0;
    const auto [end, err] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (err == std::errc() && end == text->data() + text->size()) return n;
    return *text;
}

} // namespace

bench_result run_mutex_uncontended(const bench_options& o, measured_window* window) {
    Session session(session_options(o));
    connect_or_throw(session);
    Mutex m(session, unique_path(o, "uncontended"), mutex_options(o));
    warm_up(m, std::min(o.ops / 10, 200));
    if (window) window->begin();
    auto r = run_uncontended(m, mutex_run(o));
    if (window) r.extra.update(window->end(r.ops));
    return mark_options(r, o);
}

namespace {

// The contended scenario's clients on `path`: each its own Session (on
// `executor` when given, else on its own thread) and Mutex.
struct mutex_clients {
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<std::unique_ptr<Mutex>> mutexes;
    std::vector<Lock*> locks;

    mutex_clients(const bench_options& o, const std::string& path,
                  const boost::asio::any_io_executor* executor = nullptr) {
        for (int i = 0; i < std::max(1, o.clients); ++i) {
            sessions.push_back(executor ? std::make_unique<Session>(*executor, session_options(o))
                                        : std::make_unique<Session>(session_options(o)));
            connect_or_throw(*sessions.back());
            mutexes.push_back(std::make_unique<Mutex>(*sessions.back(), path, mutex_options(o)));
            locks.push_back(mutexes.back().get());
        }
    }
};

// Every client on one executor that one thread runs (--one-thread).
bench_result run_mutex_contended_on_one_thread(const bench_options& o, measured_window* window) {
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    std::thread runner([&io] { io.run(); });
    std::optional<bench_result> r;
    std::exception_ptr failure;
    try {
        const boost::asio::any_io_executor executor = io.get_executor();
        const mutex_clients clients(o, unique_path(o, "contended"), &executor);
        if (window) window->begin();
        r = run_clients_on_one_thread(executor, clients.locks, mutex_run(o));
        if (window) r->extra.update(window->end(r->ops));
        // The mutexes and sessions close on the executor: it runs until they are gone.
    } catch (...) {
        failure = std::current_exception();
    }
    work.reset();
    runner.join();
    if (failure) std::rethrow_exception(failure);
    return mark_options(*r, o);
}

} // namespace

bench_result run_mutex_contended(const bench_options& o, measured_window* window) {
    if (o.one_thread) return run_mutex_contended_on_one_thread(o, window);
    const mutex_clients clients(o, unique_path(o, "contended"));
    if (window) window->begin();
    auto r = run_clients(clients.locks, mutex_run(o), false);
    if (window) r.extra.update(window->end(r.ops));
    return mark_options(r, o);
}

bench_result run_mutex_requeue(const bench_options& o, const std::string& scenario, measured_window* window) {
    auto one = o;
    if (scenario == "uncontended") one.clients = 1;
    const mutex_clients clients(one, unique_path(o, "requeue-" + scenario));
    std::vector<QueueLock*> workers;
    for (const auto& m : clients.mutexes) workers.push_back(m.get());
    requeue_options ro;
    ro.ops = o.ops;
    ro.warmup = scenario == "uncontended" ? std::min(o.ops / 10, 200) : 0;
    if (window) ro.on_measuring = [window] { window->begin(); };
    auto r = run_requeue_turns(workers, ro);
    if (window) r.extra.update(window->end(r.ops));
    if (o.naive) r.extra["naive"] = true;  // --confirm-unlock is not the requeue's: it releases in its multi
    return r;
}

std::optional<nlohmann::json> run_peer(const bench_options& o, const std::string& peer, const std::string& scenario,
                                       const std::vector<std::string>& extra) {
    const int clients = scenario == "uncontended" ? 1 : o.clients;
    const auto path = unique_path(o, peer + "-" + scenario);
    std::vector<std::string> argv;
    if (peer == "curator") {
        if (o.curator_script.empty() || !std::filesystem::exists(o.curator_script)) {
            std::cerr << "zklock bench: Curator harness not found at '" << o.curator_script
                      << "' (pass --curator-script)\n";
            return std::nullopt;
        }
        argv = {o.curator_script, o.connect, scenario, std::to_string(clients), std::to_string(o.ops), path};
        if (scenario == "uncontended" || scenario == "contended")
            argv.insert(argv.end(), {"--warmup", std::to_string(o.curator_warmup)});
    } else {
        if (const auto why = kazoo_unavailable(o.kazoo_script); !why.empty()) {
            std::cerr << "zklock bench: kazoo not run: " << why << "\n";
            return std::nullopt;
        }
        argv = {kazoo_python, o.kazoo_script, "--connect", o.connect,         "--scenario", scenario,
                "--clients",  std::to_string(clients), "--ops", std::to_string(o.ops), "--path", path};
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto out = capture(argv);
    if (!out) return std::nullopt;
    // The result is the last line that is a JSON object (a JVM or Python may log before it).
    std::istringstream lines(*out);
    std::optional<nlohmann::json> result;
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with("{")) result = nlohmann::json::parse(line, nullptr, false);
    if (!result || result->is_discarded()) {
        std::cerr << "zklock bench: " << peer << " printed no result line:\n" << *out;
        return std::nullopt;
    }
    return result;
}

nlohmann::json run_floor_beside(const bench_options& o, bench_result& r, bool requeue_row) {
    const bool contended = r.scenario == "contended";
    handoff_floor_options fo;
    fo.connect = o.connect;
    fo.dir = unique_path(o, contended ? "handoff-floor" : "floor");
    fo.auth = o.creds.zookeeper;
    fo.ops = o.ops;
    fo.warmup = std::min(o.ops / 10, 200);
    fo.clients = r.clients;
    fo.release_proof = contended && o.floor_release_proof;
    fo.requeue = o.floor_requeue || requeue_row;
    if (requeue_row) fo.dir = unique_path(o, contended ? "requeue-handoff-floor" : "requeue-floor");
    measured_window window(o.connect, o.connect_timeout);
    fo.on_measuring = [&window] { window.begin(); };
    bench_result floor;
    std::string measures;
    if (contended) {
        const auto f = run_handoff_floor(fo);
        floor = timed_result(r.scenario, r.clients, f.acquire_us, f.wall_s);
        if (f.client_schedule.is_object()) floor.extra.update(f.client_schedule);
        floor.extra["handoff_p50_us"] = percentile(f.handoff_us, 0.5);
        r.extra["handoff_p50_vs_floor"] =
            r.extra["handoff_p50_us"].get<double>() / floor.extra["handoff_p50_us"].get<double>();
        // The release's ops; with requeue, the next node's create joins them in the transaction.
        const std::string release = fo.release_proof ? "create and delete the sibling, setData, delete" : "delete";
        const std::string sent = fo.requeue ? "one transaction (" + release + ", the next create) + getChildren"
                                 : fo.release_proof ? "one transaction (" + release + ") + create + getChildren"
                                                    : "delete + create + getChildren";
        if (fo.release_proof) {
            r.extra["floor_release"] = "proof";
            measures = "each waiter watches its predecessor (getData) and its .released sibling (exists) and holds on "
                       "the sibling's creation, no listing after it; release = " + sent + " pipelined";
        } else {
            measures = "each waiter watches its predecessor and holds on its deletion, no listing after it; release = " +
                       sent + " pipelined";
        }
    } else {
        const auto f = run_floor(fo);
        floor = timed_result(r.scenario, 1, f.samples_us, f.wall_s);
        if (f.client_schedule.is_object()) floor.extra.update(f.client_schedule);
        measures = fo.requeue ? "one transaction (delete, the next create) + getChildren pipelined, one round trip"
                              : "delete + create + getChildren pipelined, one round trip: the least a lock cycle costs";
    }
    if (fo.requeue && !requeue_row) r.extra["floor_requeue"] = true;
    floor.backend = "c-client floor";
    floor.extra.update(window.end(floor.ops));
    if (requeue_row) floor.extra["requeue"] = true;
    // By construction: one listing per cycle or turn, behind its create; in
    // turns, each waiter woken once, by its predecessor's deletion.
    lock_stats by_design;
    by_design.acquisitions = by_design.attempts = floor.ops;
    by_design.wakeups = contended ? floor.ops : 0;
    floor.counters = by_design;
    r.extra["floor_p50_us"] = floor.p50_us;
    r.extra["p50_vs_floor"] = r.p50_us / floor.p50_us;
    r.extra["ops_per_s_vs_floor"] = r.ops_per_s / floor.ops_per_s;
    auto fj = to_json(floor);
    fj["measures"] = measures;
    return fj;
}

std::optional<std::string> peer_unavailable(const bench_options& o) {
    if (o.curator && (o.curator_script.empty() || !std::filesystem::exists(o.curator_script)))
        return "--curator: the Curator harness is not at '" + o.curator_script + "' (pass --curator-script)";
    if (o.kazoo)
        if (const auto why = kazoo_unavailable(o.kazoo_script); !why.empty()) return "--kazoo: " + why;
    return std::nullopt;
}

int missing_peers(const std::set<std::string>& failed) {
    if (failed.empty()) return 0;
    std::string names;
    for (const auto& peer : failed) names += (names.empty() ? "" : " and ") + peer;
    std::cerr << "zklock bench: " << names << " asked for but could not run (said above): "
              << (failed.size() == 1 ? "its" : "their") << " rows are missing\n";
    return exit_unavailable;
}

int bench_mutex_scenarios(const bench_options& o) {
    // A peer asked for that cannot run here is an error, said before any server starts.
    if (const auto why = peer_unavailable(o)) {
        std::cerr << "zklock bench: " << *why << "\n";
        return exit_unavailable;
    }
    // The peers that did not run once (a JVM without Curator's jars, ...): not tried again.
    std::set<std::string> failed;
    bench_servers_options so;
    so.connect = o.connect;
    so.connect_given = o.connect_given;
    so.ensemble = o.ensemble > 0 ? o.ensemble : 1;
    so.config = o.server_config;
    so.srvr_timeout = o.connect_timeout;  // --connect-timeout, else its default
    const bench_servers servers(so);
    const busy_load busy(o.busy);

    std::vector<std::string> scenarios;
    if (o.scenario == "all") scenarios = {"uncontended", "contended"};
    else scenarios = {o.scenario};
    auto rows = nlohmann::json::array();
    // The leader, whose fsyncs every write of an ensemble waits for too.
    std::optional<std::string> leader;
    for (const auto& node : servers.nodes())
        if (node.role == "leader") leader = node.connect;
    for (const auto& node : servers.nodes()) {
        auto on = o;
        on.connect = node.connect;
        // What the servers did for the row just run (ensemble/server_work.hpp).
        struct reading {
            std::optional<server_counters> served, leader;
        };
        const auto read = [&] {
            reading r;
            r.served = read_server_counters(node.connect, o.connect_timeout);
            if (leader && *leader != node.connect) r.leader = read_server_counters(*leader, o.connect_timeout);
            return r;
        };
        reading before;
        // The work since `before`; the reading taken is the next row's `before`.
        const auto take_work = [&] {
            const auto after = read();
            auto work = before.served && after.served
                            ? work_between(*before.served, *after.served, before.leader, after.leader)
                            : nlohmann::json();
            before = after;
            return work;
        };
        const auto emit = [&](nlohmann::json row) {
            print_result(row, o.json);
            rows.push_back(std::move(row));
        };
        if (o.warmup > 0) {
            // A fresh server runs interpreted Java for its first thousands of requests:
            // warm up the one the clients use so whichever client is measured first is
            // not penalised.
            auto w = on;
            w.ops = o.warmup;
            w.naive = false;
            run_mutex_uncontended(w);
            std::cerr << "zklock bench: warmed up the "
                      << (node.role == "standalone" || node.role == "as given" ? "server" : node.role) << " with "
                      << o.warmup << " acquire/release cycles\n";
        }
        for (const auto& s : scenarios) {
            std::vector<nlohmann::json> rounds;
            for (int round = 1; round <= std::max(1, o.rounds); ++round) {
                // This round's rows: the server's tags, then its ratios once every client has run.
                std::vector<nlohmann::json> these;
                const auto add = [&](nlohmann::json row) {
                    if (!row.contains("server_work")) row["server_work"] = take_work();
                    row["server"] = node.role;
                    row["ensemble"] = node.ensemble ? nlohmann::json(*node.ensemble) : nlohmann::json();
                    row["busy"] = busy.size();
                    if (o.rounds > 1) row["round"] = round;
                    these.push_back(std::move(row));
                };
                // zklock's row, the floor's beside it (on the same warm server,
                // right after it), zklock's row after the floor's.
                const auto with_floor = [&](bench_result r, bool requeue_row) {
                    // What the servers did for zklock's row is read before the floor runs.
                    const auto zklock_work = take_work();
                    if (o.floor && !o.naive) {
                        // The floor is the C client's bare loop: a connection lost in a
                        // cycle ends it, where zklock's Session rides the loss out. Its
                        // row is then left out, and zklock's says why, rather than the
                        // invocation ending without any row.
                        try {
                            add(run_floor_beside(on, r, requeue_row));
                        } catch (const zklock::error& e) {
                            // Only the ways a connection ends: a refusal or a bug still ends the run.
                            const auto ec = e.code();
                            if (ec != errc::connection_loss && ec != errc::session_expired &&
                                ec != errc::operation_timeout && ec != errc::timeout)
                                throw;
                            std::cerr << "zklock bench: the C client's floor stopped (" << e.what()
                                      << "); its row is left out\n";
                            r.extra["floor_failed"] = e.what();
                            take_work();  // what the servers did for it is nobody's row
                        }
                    }
                    auto zklock_row = to_json(r);  // with the floor's ratios
                    zklock_row["server_work"] = zklock_work;
                    if (o.lock_delay_ms > 0) zklock_row["lock_delay_ms"] = o.lock_delay_ms;
                    add(std::move(zklock_row));
                };
                measured_window window(node.connect, o.connect_timeout);
                before = read();
                with_floor(s == "uncontended" ? run_mutex_uncontended(on, &window) : run_mutex_contended(on, &window),
                           false);
                if (o.requeue) with_floor(run_mutex_requeue(on, s, &window), true);
                for (const auto& [asked, peer] : {std::pair{o.curator, "curator"}, std::pair{o.kazoo, "kazoo"}}) {
                    if (!asked || failed.contains(peer)) continue;
                    auto row = run_peer(on, peer, s);
                    if (!row) {
                        failed.insert(peer);
                        continue;
                    }
                    add_transactions_per_turn(*row);
                    add(std::move(*row));
                }
                add_rate_ratios(these);
                auto ratioed = with_peer_ratios(nlohmann::json(these));
                for (auto& row : ratioed) {
                    rounds.push_back(row);
                    emit(std::move(row));
                }
            }
            if (o.rounds > 1)
                for (auto& row : median_rows(rounds)) emit(std::move(row));
            print_table();  // this scenario's rows, without --json
        }
    }
    if (o.report_dir.empty()) return missing_peers(failed);
    nlohmann::json served = nlohmann::json::array();
    for (const auto& node : servers.nodes()) served.push_back(node.role);
    const nlohmann::json report = {
        {"command", o.command_line},
        {"date", now_utc()},
        {"machine", describe_machine()},
        {"servers",
         {{"ensemble", so.ensemble},
          {"version", servers.version()},
          {"fsync", fsync_on(o.server_config)},
          {"tick_time_ms", cfg_number(o.server_config, "tickTime", 200)},
          {"max_session_timeout_ms", cfg_number(o.server_config, "maxSessionTimeout", 20000)},
          {"config", o.server_config},
          {"served", served}}},
        {"busy", busy.size()},
        {"clients", o.clients},
        {"ops", o.ops},
        {"warmup", o.warmup},
        {"curator_warmup", o.curator ? nlohmann::json(o.curator_warmup) : nlohmann::json()},
        {"rounds", o.rounds},
        {"results", rows}};
    if (!write_peers_report(o.report_dir, peers_report_stem(so.ensemble, o.busy), report)) return 1;
    return missing_peers(failed);
}

} // namespace zklock::cli::zkbench
