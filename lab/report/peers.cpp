// The peers report (report/peers.hpp): ratios, Markdown, the two files.
#include "report/peers.hpp"

#include "bench.hpp"
#include "runs/rounds.hpp"
#include "terminal_text.hpp"

#include <cmath>
#include <optional>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <system_error>
#include <vector>

namespace zklock::cli {
namespace {

using json = nlohmann::json;

// The client kinds of a table, in the order its rows show them.
struct client_kind {
    const char* backend;  // the rows' "backend"
    bool requeue;         // the rows' "requeue"
    const char* shown;    // the table's name for it
};
constexpr client_kind peer_kinds[] = {{"zookeeper", false, "zklock"},
                                      {"c-client floor", false, "C client floor"},
                                      {"zookeeper", true, "zklock requeue"},
                                      {"c-client floor", true, "requeue floor"},
                                      {"curator", false, "Curator"},
                                      {"kazoo", false, "kazoo"}};

bool is_requeue(const json& r) { return r.value("requeue", false); }
bool is_median(const json& r) { return r.value("round", json()) == "median"; }

// a / b when both are positive numbers, else null.
json quotient(const json& a, const json& b) {
    if (!a.is_number() || !b.is_number()) return nullptr;
    const double x = a.get<double>(), y = b.get<double>();
    if (!(x > 0) || !(y > 0)) return nullptr;
    return x / y;
}

// The row of `backend` (and, `requeue` given, of that kind) of the same run as `like`.
const json* row_like(const json& rows, const std::string& backend, const json& like,
                     std::optional<bool> requeue = std::nullopt) {
    for (const auto& r : rows)
        if (r.value("backend", "") == backend && same_run(r, like) && (!requeue || is_requeue(r) == *requeue))
            return &r;
    return nullptr;
}

// The row of `kind` on `server` in `rows` (one scenario's shown rows).
const json* row_of(const std::vector<const json*>& rows, const client_kind& kind, const json& server) {
    for (const auto* r : rows)
        if (r->value("backend", "") == kind.backend && is_requeue(*r) == kind.requeue &&
            r->value("server", json()) == server)
            return r;
    return nullptr;
}

json field_of(const json* row, const char* key) { return row && row->contains(key) ? (*row)[key] : json(); }

std::string number(const json& v, int precision = 0) {
    if (!v.is_number()) return "-";
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << v.get<double>();
    return s.str();
}

std::string times(const json& v) { return v.is_number() ? number(v, 2) + "x" : "-"; }

std::string text_of(const json& v, const char* key, const std::string& otherwise = "-") {
    return v.contains(key) && v[key].is_string() ? v[key].get<std::string>() : otherwise;
}

// The servers that served, in order of first appearance in the results.
std::vector<json> servers_in(const json& results) {
    std::vector<json> out;
    for (const auto& r : results) {
        const auto s = r.value("server", json());
        bool seen = false;
        for (const auto& o : out) seen = seen || o == s;
        if (!seen) out.push_back(s);
    }
    return out;
}

// A scenario's rows as its table shows them: the medians when there are rounds, else every row.
std::vector<const json*> shown_rows(const json& results, const std::string& scenario) {
    bool medians = false;
    for (const auto& r : results) medians = medians || is_median(r);
    std::vector<const json*> out;
    for (const auto& r : results)
        if (r.value("scenario", "") == scenario && is_median(r) == medians) out.push_back(&r);
    return out;
}

void write_table(std::ostringstream& md, const json& results, const std::string& scenario) {
    const bool contended = scenario == "contended";
    const auto rows = shown_rows(results, scenario);
    md << "| server | client | p50 (us) | p99 (us) | acquisitions/s |" << (contended ? " handoff p50 (us) |" : "")
       << " vs Curator | vs kazoo | " << (contended ? "handoff" : "p50") << " vs floor | rate vs floor |"
       << (contended ? "" : " client CPU, wait (us) |") << " txns/turn | requests/txn | txns/fsync (leader) |\n"
       << "|---|---|---:|---:|---:|" << (contended ? "---:|" : "") << "---:|---:|---:|---:|"
       << (contended ? "" : "---:|") << "---:|---:|---:|\n";
    for (const auto& server : servers_in(results))
        for (const auto& kind : peer_kinds) {
            const auto* r = row_of(rows, kind, server);
            if (!r) continue;
            const bool ours = std::string(kind.backend) == "zookeeper";
            md << "| " << (server.is_string() ? server.get<std::string>() : "-") << " | " << kind.shown << " | "
               << number(field_of(r, "p50_us")) << " | " << number(field_of(r, "p99_us")) << " | "
               << number(field_of(r, "ops_per_s")) << " |";
            if (contended) md << " " << number(field_of(r, "handoff_p50_us")) << " |";
            for (const char* ratio : {"ratio_to_curator", "ratio_to_kazoo", "ratio_to_floor"})
                md << " " << (ours ? times(field_of(r, ratio)) : std::string()) << " |";
            // Every client's rate over the floor's (the requeue rows': the requeue floor's).
            md << " " << (std::string(kind.backend) == "c-client floor" ? std::string() : times(field_of(r, "ops_per_s_vs_floor")))
               << " |";
            // The bench's own threads (runs/client_schedule.hpp): zklock's and the floor's, not the peers' processes.
            if (!contended) {
                const auto cpu = field_of(r, "client_cpu_us_per_cycle");
                const auto wait = field_of(r, "client_wait_us_per_cycle");
                md << " " << (cpu.is_number() && wait.is_number() ? number(cpu) + ", " + number(wait) : std::string()) << " |";
            }
            // What the servers did (ensemble/server_work.hpp): for the measured part alone, then around the row.
            md << " " << number(field_of(r, "transactions_per_turn"), 2) << " |";
            const auto work = field_of(r, "server_work");
            const auto of_work = [&](const char* key) { return work.is_object() ? field_of(&work, key) : json(); };
            md << " " << number(of_work("requests_per_transaction"), 2) << " | "
               << number(of_work("transactions_per_fsync"), 2);
            if (of_work("leader_transactions_per_fsync").is_number())
                md << " (" << number(of_work("leader_transactions_per_fsync"), 2) << ")";
            md << " |\n";
        }
}

// The rounds of --rounds N, one line each: every client's acquisitions/s and
// zklock's over the peers'.
void write_rounds(std::ostringstream& md, const json& results) {
    md << "| scenario | server | round | zklock | floor | zklock requeue | requeue floor | Curator | kazoo "
          "| zklock / Curator | zklock / kazoo | requeue / Curator |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& r : results) {
        if (r.value("backend", "") != "zookeeper" || is_requeue(r) || is_median(r) || !r.contains("round")) continue;
        const auto rate = [&](const char* backend, bool requeue) {
            return field_of(row_like(results, backend, r, requeue), "ops_per_s");
        };
        const auto* requeue = row_like(results, "zookeeper", r, true);
        md << "| " << r.value("scenario", "") << " | " << text_of(r, "server") << " | " << number(r["round"]) << " | "
           << number(rate("zookeeper", false)) << " | " << number(rate("c-client floor", false)) << " | "
           << number(rate("zookeeper", true)) << " | " << number(rate("c-client floor", true)) << " | "
           << number(rate("curator", false)) << " | " << number(rate("kazoo", false)) << " | "
           << times(field_of(&r, "ops_per_s_vs_curator")) << " | " << times(field_of(&r, "ops_per_s_vs_kazoo"))
           << " | " << times(field_of(requeue, "ops_per_s_vs_curator")) << " |\n";
    }
}

bool has_requeue(const json& results) {
    for (const auto& r : results)
        if (is_requeue(r)) return true;
    return false;
}

bool has_scenario(const json& results, const std::string& scenario) {
    for (const auto& r : results)
        if (r.value("scenario", "") == scenario) return true;
    return false;
}

// What the C client's floor of a scenario did, as its row tells it (the floor
// options change it: --floor-release-proof, --floor-requeue); `otherwise`
// when no floor row tells.
std::string floor_measures(const json& results, const std::string& scenario, const std::string& otherwise) {
    for (const auto& r : results)
        if (r.value("backend", "") == "c-client floor" && r.value("scenario", "") == scenario &&
            r.contains("measures") && r["measures"].is_string())
            return r["measures"].get<std::string>();
    return otherwise;
}

} // namespace

json with_peer_ratios(json rows) {
    for (auto& r : rows) {
        if (r.value("backend", "") != "zookeeper" || is_median(r)) continue;
        const bool contended = r.value("scenario", json()) == "contended";
        for (const auto& [peer, key] : {std::pair{"curator", "ratio_to_curator"}, std::pair{"kazoo", "ratio_to_kazoo"}}) {
            const auto* p = row_like(rows, peer, r);
            r[key] = contended ? quotient(r.value("ops_per_s", json()), field_of(p, "ops_per_s"))
                               : quotient(field_of(p, "p50_us"), r.value("p50_us", json()));
        }
        const auto* floor = row_like(rows, "c-client floor", r, is_requeue(r));
        const char* compared = contended ? "handoff_p50_us" : "p50_us";
        r["ratio_to_floor"] = quotient(r.value(compared, json()), field_of(floor, compared));
    }
    return rows;
}

std::string peers_markdown(const json& report) {
    const auto& servers = report["servers"];
    const auto& results = report["results"];
    const auto& machine = report["machine"];
    const int n = servers.value("ensemble", 1);
    const int busy = report.value("busy", 0);
    std::ostringstream md;
    md << "# zklock, Curator, kazoo and the C client's floor on "
       << (n == 1 ? std::string("a standalone ZooKeeper server") : "a " + std::to_string(n) + "-node ZooKeeper ensemble")
       << (busy > 0 ? " with " + counted(busy, "busy process", "busy processes") + " beside" : std::string()) << "\n\n";
    md << "Generated by `" << text_of(report, "command") << "` on " << text_of(report, "date") << ".\n\n";
    md << "Machine: " << text_of(machine, "cpu") << ", " << number(machine.value("cpus", json())) << " CPUs, "
       << number(machine.value("memory_gib", json())) << " GiB, " << text_of(machine, "kernel")
       << "; clients and servers share it.\n\n";
    md << "Servers: " << (n == 1 ? std::string("one standalone server") : std::to_string(n) + " servers in one ensemble")
       << " on loopback, ZooKeeper " << text_of(servers, "version", "(version not told)") << ", fsync "
       << (servers.value("fsync", true) ? "on (every write waits for the transaction log's fsync)" : "off (forceSync=no)")
       << ", tickTime " << number(servers.value("tick_time_ms", json())) << " ms, maxSessionTimeout "
       << number(servers.value("max_session_timeout_ms", json())) << " ms";
    if (servers.contains("config") && !servers["config"].empty()) {
        md << ", zoo.cfg also";
        for (const auto& line : servers["config"]) md << " `" << line.get<std::string>() << "`";
    }
    md << ". ";
    if (n == 1) {
        md << "Every client connects to it.\n\n";
    } else {
        md << "The scenarios run once per role, every client of a pass connected to one server through a connect "
              "string naming it alone: first a follower (which forwards each write to the leader and answers reads "
              "itself), then the leader.\n\n";
    }
    md << "Load: "
       << (busy > 0 ? counted(busy, "CPU-bound process", "CPU-bound processes") + " (`--busy " + std::to_string(busy) +
                          "`) spun beside the whole measured run."
                    : std::string("no `--busy` processes (what else ran on the machine is not recorded)."))
       << "\n\n";
    md << "Runs: " << number(report.value("ops", json())) << " measured acquisitions per row";
    if (has_scenario(results, "contended"))
        md << ", " << number(report.value("clients", json())) << " clients on one lock in the contended scenario";
    const int warmup = report.value("warmup", 0);
    md << "; " << (warmup > 0 ? std::to_string(warmup) + " unmeasured acquire/release cycles against each serving server "
                                                         "before its rows"
                              : std::string("no warm-up"))
       << "; Curator " << (report.contains("curator_warmup") && report["curator_warmup"].is_number()
                               ? number(report["curator_warmup"]) + " unmeasured acquisitions in its JVM first, "
                                                                    "contended ones contended (its JIT warm, as in a "
                                                                    "long-running service)"
                               : std::string("not run"));
    const int rounds = report.value("rounds", 1);
    if (rounds > 1)
        md << ". The clients ran in turn " << rounds << " times (rounds); the tables give each client's median over "
           << "the rounds (of each figure and ratio), \"Rounds\" each round";
    if (has_requeue(results))
        md << ". zklock requeue: workers taking turns with requeue(), which releases and queues again in one "
              "transaction (one worker uncontended; the contended clients contended), a sample being a turn; "
              "requeue floor: the C client's loop doing the same, its ratios zklock requeue's";
    md << ". Compare rows of one table: they come from one run.\n\n"
       << "rate vs floor: each client's acquisitions/s over the C client floor's (the requeue rows': the requeue "
          "floor's). txns/turn: the transactions the serving server committed during the measured part alone "
          "(its srvr Zxid read before and after it, by the bench or the peer's harness), per measured acquisition. "
          "What the servers did around each row (their mntr and srvr, read before and after it; warm-ups and "
          "sessions included): requests/txn, the requests the serving server received per transaction committed "
          "(a lock cycle is two transactions for every client: the create, and the delete or the release's "
          "transaction); txns/fsync, the transactions per sync of the serving server's transaction log, and in "
          "brackets the leader's when the clients were on a follower. With fsync on, a cycle waits for the syncs of "
          "its two transactions: at one transaction per fsync, two syncs in a row, whatever the client.\n";
    if (has_scenario(results, "uncontended")) {
        md << "\n## Uncontended: one client, acquire + release\n\n"
           << "A sample is one acquire and one release as the caller sees them. vs Curator, vs kazoo: the peer's p50 "
              "/ zklock's (above 1: zklock is faster). vs floor: zklock's p50 / the C client floor's ("
           << floor_measures(results, "uncontended", "delete, create and getChildren in one round trip")
           << "; 1: at the floor). client CPU, wait: per cycle, the time the bench's "
              "own threads (zklock's caller and Session thread; the floor's one thread) spent on a CPU and runnable "
              "but waiting for one, from the kernel's schedstat; a busy host shows in the wait (Curator's and "
              "kazoo's are processes of their own, not read).\n\n";
        write_table(md, results, "uncontended");
    }
    if (has_scenario(results, "contended")) {
        md << "\n## Contended: " << counted(report.value("clients", 0), "client") << " on one lock\n\n"
           << "Each client acquires again as soon as it has released. p50 and p99: the wait, from lock() to the "
              "grant; handoff: from the holder's unlock() to the next grant. vs Curator, vs kazoo: zklock's "
              "acquisitions/s / the peer's (above 1: zklock is ahead). vs floor: zklock's handoff p50 / the C client "
              "floor's ("
           << floor_measures(results, "contended", "each waiter holding on its predecessor's deletion")
           << "; 1: at the floor).\n\n";
        write_table(md, results, "contended");
    }
    if (rounds > 1) {
        md << "\n## Rounds\n\nAcquisitions/s of each client in each round, and zklock's over the peers' (requeue: "
              "zklock requeue's over Curator's, a fleet taking turns against Curator's InterProcessMutex loop).\n\n";
        write_rounds(md, results);
    }
    return md.str();
}

bool write_peers_report(const std::string& dir, const std::string& stem, json report) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        std::cerr << "zklock bench: cannot create " << dir << ": " << ec.message() << "\n";
        return false;
    }
    report["results"] = with_peer_ratios(report["results"]);
    const auto base = (std::filesystem::path(dir) / stem).string();
    for (const auto& [path, text] : {std::pair{base + ".json", report.dump(2) + "\n"},
                                     std::pair{base + ".md", peers_markdown(report)}})
        if (!write_text_file(path, text)) {
            std::cerr << "zklock bench: cannot write " << path << "\n";
            return false;
        }
    std::cerr << "zklock bench: wrote " << base << ".json and " << base << ".md\n";
    return true;
}

} // namespace zklock::cli
