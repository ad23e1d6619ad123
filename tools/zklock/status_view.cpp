#include "status_view.hpp"

#include "terminal_text.hpp"

#include <zklock/queue_view.hpp>
#include <zklock/revocation.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <iomanip>
#include <set>
#include <sstream>

namespace zklock::cli {
namespace {

std::string hex_session(std::int64_t id) {
    std::ostringstream out;
    out << "0x" << std::hex << static_cast<std::uint64_t>(id);
    return out.str();
}

// 350ms, 1.2s, 3m4s, 2h5m, 3d4h.
std::string human_age(std::int64_t ms) {
    if (ms < 0) ms = 0;
    if (ms < 1000) return std::to_string(ms) + "ms";
    if (ms < 60'000) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms / 100) / 10.0);
        return buf;
    }
    const std::int64_t s = ms / 1000;
    if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
    if (s < 86400) return std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m";
    return std::to_string(s / 86400) + "d" + std::to_string(s % 86400 / 3600) + "h";
}

std::string removal_hint(const std::string& path, const std::string& connect, const contender& c) {
    return path + "/" + c.node +
           " is a persistent node (not ephemeral): no session end deletes it, and it blocks everyone queued "
           "behind it; delete it with: zkCli.sh -server " + connect + " delete " + path + "/" + c.node;
}

std::string_view kind_of(const contender& c) { return c.shared ? "shared" : "exclusive"; }

// The dialects in the queue, in name order: more than one means a mixed fleet.
std::vector<std::string> dialects_of(const std::vector<contender>& queue) {
    std::set<std::string> seen;
    for (const auto& c : queue) seen.insert(c.dialect);
    return {seen.begin(), seen.end()};
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

// A node's data as the OWNER column shows it (not yet escaped): for a lock
// set's node, with the set's other lock paths.
std::string shown_data(const std::string& data, const std::string& path) {
    // The request replaced whatever the node held (its owner's name).
    if (is_revocation_request(data)) return "[revocation requested]";
    const auto set = parse_contender_data(data);
    std::string out = set.data;
    std::vector<std::string> others;
    for (const auto& p : set.lock_set)
        if (p != path) others.push_back(p);
    if (!set.lock_set.empty()) out += (out.empty() ? "" : " ") + std::string("[lock set, also: ") + joined(others) + "]";
    return out;
}

// "position 0", "positions 0 and 1", "positions 0-4", "positions 0, 2 and 5".
std::string positions_text(const std::vector<std::size_t>& p) {
    if (p.size() == 1) return "position " + std::to_string(p[0]);
    if (p.size() > 2 && p.back() - p.front() + 1 == p.size())
        return "positions " + std::to_string(p.front()) + "-" + std::to_string(p.back());
    std::string out = "positions ";
    for (std::size_t i = 0; i < p.size(); ++i)
        out += (i == 0 ? "" : i + 1 == p.size() ? " and " : ", ") + std::to_string(p[i]);
    return out;
}

bool has_readers(const queue_listing& listing) {
    return std::any_of(listing.contenders.begin(), listing.contenders.end(), [](const contender& c) { return c.shared; });
}

// The line's note on who holds: "(position 0 holds the lock)", ...
std::string holders_note(const queue_listing& listing, std::size_t permits) {
    const auto holds = holders(listing, permits);
    std::vector<std::size_t> held;
    for (std::size_t i = 0; i < holds.size(); ++i)
        if (holds[i]) held.push_back(listing.contenders[i].position);
    if (permits > 1) {
        const auto of = "a semaphore of " + counted(static_cast<long long>(permits), "permit");
        if (held.empty()) return "(" + of + "; nobody holds one)";
        return "(" + of + ": " + positions_text(held) + (held.size() == 1 ? " holds one)" : " hold one each)");
    }
    if (held.empty()) return "(nobody holds the lock)";
    if (!has_readers(listing)) return "(" + positions_text(held) + (held.size() == 1 ? " holds" : " hold") + " the lock)";
    if (!listing.contenders.front().shared) return "(" + positions_text(held) + " holds the read-write lock: a writer)";
    return "(" + positions_text(held) + (held.size() == 1 ? " holds" : " hold") +
           " the read-write lock: the readers ahead of the first writer)";
}

// The table under the line: a column per field, as wide as its widest cell
// (two blanks apart), OWNER last. Node names and data come from whoever
// created the nodes: escaped. Unless `wide`, the table fits table_width:
// DIALECT only when the queue mixes dialects, KIND only when it holds readers,
// a node name shortened to its end (the sequence number), the owner to what
// is left of the line.
std::string table_text(const std::vector<contender>& queue, const std::string& path, std::int64_t now, bool wide) {
    struct column {
        std::string header;
        std::vector<std::string> cells;  // escaped
        std::size_t width = 0;
    };
    std::vector<column> table;
    const auto add = [&](std::string header, auto cell) {
        column c{std::move(header), {}, 0};
        for (const auto& q : queue) c.cells.push_back(cell(q));
        table.push_back(std::move(c));
    };
    add("POS", [](const contender& c) { return std::to_string(c.position); });
    add("NODE", [&](const contender& c) {
        return escape_control(wide ? c.node : shortened(c.node, node_column_width, keep::end));
    });
    if (wide || dialects_of(queue).size() > 1)
        add("DIALECT", [](const contender& c) { return escape_control(c.dialect); });
    if (wide || std::any_of(queue.begin(), queue.end(), [](const contender& c) { return c.shared; }))
        add("KIND", [](const contender& c) { return std::string(kind_of(c)); });
    add("TOKEN", [](const contender& c) { return std::to_string(c.fencing_token); });
    add("SESSION", [](const contender& c) {
        return c.persistent ? std::string("persistent") : hex_session(c.owner_session);
    });
    add("AGE", [&](const contender& c) { return human_age(now - c.created_ms); });
    std::size_t used = 0;
    for (auto& c : table) {
        c.width = columns(c.header);
        for (const auto& cell : c.cells) c.width = std::max(c.width, columns(cell));
        used += c.width + 2;
    }
    // OWNER: the rest of the line (at least owner_column_min), or everything when wide.
    const auto owner_width = used + owner_column_min > table_width ? owner_column_min : table_width - used;
    add("OWNER", [&](const contender& c) {
        const auto data = shown_data(c.data, path);
        return escape_control(wide ? data : shortened(data, owner_width));
    });
    std::string out;
    const auto line = [&](const std::function<std::string(const column&)>& text) {
        std::string row;
        for (std::size_t i = 0; i < table.size(); ++i) {
            const auto cell = text(table[i]);
            row += cell;
            if (i + 1 < table.size()) row += std::string(table[i].width - columns(cell) + 2, ' ');
        }
        out += row + "\n";
    };
    line([](const column& c) { return c.header; });
    for (std::size_t r = 0; r < queue.size(); ++r) line([r](const column& c) { return c.cells[r]; });
    return out;
}

} // namespace

std::size_t permits_of(Session& session, const std::string& path, const queue_listing& listing, std::error_code& ec) {
    ec.clear();
    if (listing.contenders.size() < 2) return 1;
    return stored_permits(session, path, ec).value_or(1);
}

std::vector<bool> holders(const queue_listing& listing, std::size_t permits) { return queue_holders(listing, permits); }

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::vector<std::string> persistent_notes(const std::string& path, const queue_listing& listing,
                                          const std::string& connect) {
    std::vector<std::string> out;
    for (const auto& c : listing.contenders)
        if (c.persistent) out.push_back(removal_hint(path, connect, c));
    return out;
}

std::vector<std::string> revocation_notes(const std::string& path, const queue_listing& listing,
                                          std::size_t permits) {
    const auto holds = holders(listing, permits);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < listing.contenders.size(); ++i) {
        const auto& c = listing.contenders[i];
        if (!is_revocation_request(c.data)) continue;
        out.push_back("revocation requested of position " + std::to_string(c.position) + " (" + path + "/" + c.node +
                      "): " +
                      (holds[i] ? "a revocable holder lets go; one that is not keeps the lock"
                                : "it waits; a revocable zklock lock lets go once granted"));
    }
    return out;
}

bool same_queue(const queue_listing& a, const queue_listing& b) {
    if (a.foreign != b.foreign || a.contenders.size() != b.contenders.size()) return false;
    for (std::size_t i = 0; i < a.contenders.size(); ++i) {
        const auto &x = a.contenders[i], &y = b.contenders[i];
        if (x.node != y.node || x.data != y.data || x.owner_session != y.owner_session) return false;
    }
    return true;
}

nlohmann::ordered_json status_json(const std::string& path, const queue_listing& listing, std::size_t permits,
                                   std::int64_t now) {
    const auto dialects = dialects_of(listing.contenders);
    const auto holds = holders(listing, permits);
    nlohmann::ordered_json out;
    out["path"] = path;
    out["exists"] = listing.path_exists;
    if (permits > 1) out["permits"] = permits;  // a semaphore's: its first `permits` nodes hold
    out["contenders"] = nlohmann::ordered_json::array();
    out["dialects"] = dialects;
    out["mixed_dialects"] = dialects.size() > 1;
    out["foreign"] = listing.foreign;
    for (std::size_t i = 0; i < listing.contenders.size(); ++i) {
        const auto& c = listing.contenders[i];
        out["contenders"].push_back({{"position", c.position},
                                     {"holds", static_cast<bool>(holds[i])},
                                     {"node", c.node},
                                     {"dialect", c.dialect},
                                     {"kind", kind_of(c)},
                                     {"fencing_token", c.fencing_token},
                                     {"owner", c.data},
                                     {"owner_session", hex_session(c.owner_session)},
                                     {"persistent", c.persistent},
                                     {"created_ms", c.created_ms},
                                     {"data", parse_contender_data(c.data).data},
                                     {"revocation_requested", is_revocation_request(c.data)},
                                     {"age_ms", std::max<std::int64_t>(0, now - c.created_ms)}});
        // A lock set's node: every lock path of its set.
        if (const auto set = parse_contender_data(c.data); !set.lock_set.empty())
            out["contenders"].back()["lock_set"] = set.lock_set;
    }
    return out;
}

std::string status_text(const std::string& path, const queue_listing& listing, std::size_t permits,
                        const std::string& connect, std::int64_t now, bool wide) {
    const auto& queue = listing.contenders;
    std::ostringstream out;
    // Children that are not contenders: not in the queue, shown so nobody wonders.
    const auto print_foreign = [&] {
        if (listing.foreign.empty()) return;
        std::vector<std::string> shown;
        for (const auto& f : listing.foreign) shown.push_back(escape_control(f));
        out << "foreign children (no dialect recognises them; not in the queue): " << joined(shown) << "\n";
    };
    if (!listing.path_exists) {
        out << escape_control(path) << ": " << missing_path_text << "\n";
        return out.str();
    }
    if (queue.empty()) {
        out << escape_control(path) << ": no contenders\n";
        print_foreign();
        return out.str();
    }
    out << escape_control(path) << ": " << queue.size() << (queue.size() == 1 ? " contender" : " contenders")
        << " " << holders_note(listing, permits) << "\n";
    if (const auto dialects = dialects_of(queue); dialects.size() > 1)
        out << "mixed dialects: " << joined(dialects) << " (every one of them queues in this order for zklock)\n";
    out << table_text(queue, path, now, wide);
    for (const auto& note : persistent_notes(path, listing, connect)) out << escape_control("note: " + note) << "\n";
    for (const auto& note : revocation_notes(path, listing, permits)) out << escape_control("note: " + note) << "\n";
    print_foreign();
    return out.str();
}

} // namespace zklock::cli
