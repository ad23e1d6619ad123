// What `zklock status` shows of one lock's queue: the table, the JSON object,
// the notes. Pure functions of a listing (and the time now); status.cpp reads
// the server and decides when to show them.
#pragma once

#include <zklock/mutex.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace zklock::cli {

/// The queue of `path` as a table, holder first, ages counted to `now_ms`
/// (the server's ctime against this clock); node names and data escaped.
/// `connect` goes into the hint that says how to remove a persistent node.
std::string status_text(const std::string& path, const queue_listing& listing, const std::string& connect,
                        std::int64_t now_ms);

/// The same as one JSON object: {path, contenders: [...], dialects, mixed_dialects, foreign}.
nlohmann::ordered_json status_json(const std::string& path, const queue_listing& listing, std::int64_t now_ms);

/// One note per persistent node in the queue: how to delete it.
std::vector<std::string> persistent_notes(const std::string& path, const queue_listing& listing,
                                          const std::string& connect);

/// True when two listings show the same queue (nodes, their data and owners,
/// the foreign children): a watch that fired for nothing visible.
bool same_queue(const queue_listing& a, const queue_listing& b);

/// The wall clock in milliseconds since the epoch, as ctime counts.
std::int64_t now_ms();

} // namespace zklock::cli
