// zklock bench on a ZooKeeper ensemble, decided before anything starts:
// whether --ensemble and --busy go with the other options, which servers the
// clients of each pass connect to (from -c's servers' answers to srvr), what
// the servers' zoo.cfg lines say of fsync and tickTime, and the name of the
// peers report. Pure functions; unit-tested (tests/unit/test_bench_ensemble.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::cli {

/// What the checks of --ensemble and --busy look at.
struct ensemble_request {
    std::optional<int> ensemble;           ///< --ensemble N, when given
    int busy = 0;                          ///< --busy K
    std::string scenario = "uncontended";  ///< --scenario, or the scenario's subcommand
    std::string recipe = "mutex";          ///< --recipe
    bool connect = false;                  ///< -c given
    bool backend = false;                  ///< --backend given
    bool report = false;                   ///< --report given
    bool safety = false;                   ///< --safety
};

/// Why `r` cannot run, in one line (without the program's name), or nullopt:
/// --ensemble takes 1, 3 or 5 and runs the mutex scenarios (uncontended,
/// contended, all) on servers of its own, so not with -c, --backend or
/// --safety; --busy takes 0 to 16 and, given more than 0, loads the host for
/// the same scenarios only (not --backend, --safety, nor --report without
/// --ensemble, which is the backends' report).
std::optional<std::string> ensemble_refusal(const ensemble_request& r);

/// One server's answer to the four-letter word srvr.
struct server_answer {
    std::string server;               ///< host:port as -c names it
    std::optional<std::string> mode;  ///< its Mode line: standalone, leader, follower, observer; none when not told
    std::string why;                  ///< without a mode: what it answered, or why it did not
};

/// The server the clients of one pass of the scenarios connect to.
struct serving_node {
    std::string role;              ///< follower | leader | standalone | as given
    std::string connect;           ///< its connect string: the one server with -c's chroot (as given: -c itself)
    std::optional<int> ensemble;   ///< the ensemble's servers, when known
};

/// The passes of a run and what to say of them on stderr.
struct serving_plan {
    std::vector<serving_node> nodes;  ///< in the order they run: the first follower, then the leader
    std::vector<std::string> notes;   ///< servers left out, or why the run is against -c as given
};

/// The passes of a run against -c `connect`, given its servers' answers in
/// -c's order. One server: its mode when standalone (ensemble 1), leader or
/// follower (ensemble unknown). Several: the first follower, then the leader,
/// of those that answered so (ensemble: the servers -c names); a server that
/// answered otherwise or not at all is left out with a note. When no server
/// answers as one of those, one pass against `connect` as given, with a note
/// saying why.
serving_plan plan_serving_nodes(std::string_view connect, const std::vector<server_answer>& answers);

/// `server` with the chroot of `connect`: ("127.0.0.1:2182", "a:1,b:2/app")
/// gives "127.0.0.1:2182/app".
std::string with_chroot_of(std::string_view connect, std::string_view server);

/// The value of `key` in zoo.cfg lines ("key=value", blanks around either
/// trimmed; the last line wins, as the server reads them), or nullopt.
std::optional<std::string> zoo_cfg_value(const std::vector<std::string>& lines, std::string_view key);

/// Whether zoo.cfg lines leave the transaction log's fsync on: every line but
/// forceSync=no does.
bool fsync_on(const std::vector<std::string>& lines);

/// The version a srvr answer states ("3.8.0-..." of "Zookeeper version:
/// 3.8.0-..., built on ..."), or "".
std::string zookeeper_version(std::string_view srvr_answer);

/// The peers report's file name without its extension: peers-standalone
/// (ensemble 1) or peers-ensemble-N, then -busyK when busy > 0.
std::string peers_report_stem(int ensemble, int busy);

} // namespace zklock::cli
