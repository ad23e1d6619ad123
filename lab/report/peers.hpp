// zklock bench --ensemble N --report DIR: the peers report, zklock beside
// Curator, kazoo and the C client's floor on the servers of one run (a
// standalone server, or a follower and the leader of an ensemble), as
// DIR/peers-standalone or DIR/peers-ensemble-N (-busyK) .json and .md.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace zklock::cli {

/// `rows` with zklock's rows (backend "zookeeper", plain and requeue) of each
/// scenario, server and round given their ratios to the rows beside them
/// (runs/rounds.hpp's same_run; a requeue row's floor the requeue floor), null
/// where that row is missing; the median rows keep theirs (the rounds' medians):
///   ratio_to_curator, ratio_to_kazoo  uncontended: the peer's p50 / zklock's;
///                                     contended: zklock's acquisitions/s / the
///                                     peer's (above 1: zklock is ahead)
///   ratio_to_floor                    uncontended: zklock's p50 / the C client
///                                     floor's; contended: zklock's handoff p50 /
///                                     the floor's (1: at the floor)
nlohmann::json with_peer_ratios(nlohmann::json rows);

/// The Markdown of a peers report: its command line, date, machine, servers
/// (how many, version, fsync, tickTime, maxSessionTimeout, extra zoo.cfg
/// lines, the roles served), the load beside the run, and per scenario a
/// table with a row per client kind per server (p50, p99, acquisitions/s;
/// contended also the handoff p50; the medians with --rounds) and zklock's
/// ratios; with --rounds, each round's rates. `report` has the fields
/// write_peers_report() writes.
std::string peers_markdown(const nlohmann::json& report);

/// Writes `report` ({"command", "date", "machine", "servers": {"ensemble",
/// "version", "fsync", "tick_time_ms", "max_session_timeout_ms", "config",
/// "served"}, "busy", "clients", "ops", "warmup", "curator_warmup", "rounds",
/// "results"}, its results
/// given their ratios by with_peer_ratios()) to DIR/STEM.json and its
/// Markdown to DIR/STEM.md, DIR created if missing. Returns false after
/// saying why on stderr.
bool write_peers_report(const std::string& dir, const std::string& stem, nlohmann::json report);

} // namespace zklock::cli
