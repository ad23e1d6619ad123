#include "runs/table.hpp"

#include "runs/rounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace zklock::cli {
namespace {

using nlohmann::json;

// One column: its header (two lines where it holds a '\n', which keeps the
// column narrow), its alignment, a cell per row.
struct column {
    std::string header;
    bool right = true;
    std::vector<std::string> cells;

    std::string top() const {
        const auto at = header.find('\n');
        return at == std::string::npos ? "" : header.substr(0, at);
    }
    std::string bottom() const {
        const auto at = header.find('\n');
        return at == std::string::npos ? header : header.substr(at + 1);
    }
};

bool is_number(const json& row, const char* key) { return row.contains(key) && row[key].is_number(); }

std::string fixed(double v, int precision) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << v;
    return s.str();
}

// A figure in whole units, or "-" when it is missing or null.
std::string figure(const json& row, const char* key) {
    return is_number(row, key) ? fixed(row[key].get<double>(), 0) : "-";
}

// A scalar as the "name value" lines print it.
std::string scalar(const json& v) {
    if (v.is_null()) return "-";
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    const double d = v.get<double>();
    return fixed(d, std::abs(d) >= 100 ? 0 : 2);
}

std::string backend_of(const json& row) { return row.value("backend", std::string()); }

// The backend as the table names it, with how zklock's row was run; the
// requeue rows "requeue floor" and "zookeeper requeue".
std::string label(const json& row) {
    const bool requeue = row.value("requeue", false);
    auto l = requeue && backend_of(row) == "c-client floor" ? std::string("requeue floor")
                                                            : backend_of(row) + (requeue ? " requeue" : "");
    if (row.value("naive", false)) l += " (naive)";
    if (row.value("confirm_unlock", false)) l += " (confirm)";
    return l;
}

// The row's ops/s over that of the row of `other` run as it was (add_rate_ratios()), or "".
std::string ratio_to(const json& row, const std::string& other) {
    const auto key = rate_ratio_key(other);
    return is_number(row, key.c_str()) ? fixed(row[key].get<double>(), 2) + "x" : "";
}

// A line of the table, each cell text_of(its column).
template <typename Text>
void write_line(std::ostringstream& out, const std::vector<column>& columns, const std::vector<std::size_t>& widths,
                Text&& text_of) {
    std::string line;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        const std::string text = text_of(columns[c]);
        const auto pad = std::string(widths[c] - text.size(), ' ');
        line += (c == 0 ? "" : "  ") + (columns[c].right ? pad + text : text + pad);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
}

void write_table(std::ostringstream& out, const std::vector<const json*>& rows, const std::set<std::string>& fifo) {
    const auto any = [&](auto&& has) {
        return std::any_of(rows.begin(), rows.end(), [&](const json* r) { return has(*r); });
    };
    std::vector<column> columns;
    const auto add = [&](std::string header, bool right, auto&& cell) {
        column c{std::move(header), right, {}};
        for (const auto* r : rows) c.cells.push_back(cell(*r));
        columns.push_back(std::move(c));
    };
    add("scenario", false, [](const json& r) { return r.value("scenario", std::string()); });
    add("backend", false, label);
    // The server where it tells rows apart: an ensemble's, or more than one.
    const auto server = [](const json& r) { return r.contains("server") ? scalar(r["server"]) : ""; };
    if (any([](const json& r) { return is_number(r, "ensemble") && r["ensemble"].get<double>() > 1; }) ||
        any([&](const json& r) { return server(r) != server(*rows.front()); }))
        add("server", false, server);
    if (any([](const json& r) { return is_number(r, "busy") && r["busy"].get<double>() > 0; }))
        add("busy", true, [](const json& r) { return figure(r, "busy"); });
    add("clients", true, [](const json& r) { return figure(r, "clients"); });
    add("ops/s", true, [](const json& r) { return figure(r, "ops_per_s"); });
    add("p50\nus", true, [](const json& r) { return figure(r, "p50_us"); });
    add("p99\nus", true, [](const json& r) { return figure(r, "p99_us"); });
    if (any([](const json& r) { return r.contains("handoff_p50_us"); }))
        add("handoff\np50 us", true,
            [](const json& r) { return r.contains("handoff_p50_us") ? figure(r, "handoff_p50_us") : ""; });
    bool starred = false;
    if (any([](const json& r) { return r.contains("out_of_order_grants"); }))
        add("out of\norder", true, [&](const json& r) -> std::string {
            if (!is_number(r, "out_of_order_grants")) return "";
            const bool star = r["out_of_order_grants"].get<double>() > 0 && fifo.contains(backend_of(r));
            starred = starred || star;
            return figure(r, "out_of_order_grants") + (star ? "*" : "");
        });
    std::vector<std::string> compared;
    for (const auto& other : compared_backends()) {
        column c{"vs\n" + (other == "c-client floor" ? std::string("floor") : other), true, {}};
        bool filled = false;
        for (const auto* r : rows) {
            c.cells.push_back(ratio_to(*r, other));
            filled = filled || !c.cells.back().empty();
        }
        if (!filled) continue;
        columns.push_back(std::move(c));
        compared.push_back(columns.back().bottom());
    }
    std::vector<std::size_t> widths;
    for (const auto& c : columns) {
        std::size_t w = std::max(c.top().size(), c.bottom().size());
        for (const auto& cell : c.cells) w = std::max(w, cell.size());
        widths.push_back(w);
    }
    if (std::any_of(columns.begin(), columns.end(), [](const column& c) { return !c.top().empty(); }))
        write_line(out, columns, widths, [](const column& c) { return c.top(); });
    write_line(out, columns, widths, [](const column& c) { return c.bottom(); });
    for (std::size_t i = 0; i < rows.size(); ++i) {
        // --rounds: a line before each round's rows, and before the medians.
        const json none;
        const auto& round = rows[i]->contains("round") ? (*rows[i])["round"] : none;
        if (!round.is_null() && (i == 0 || !rows[i - 1]->contains("round") || (*rows[i - 1])["round"] != round))
            out << (round == "median" ? "median of " + figure(*rows[i], "rounds") + " rounds:" : "round " + scalar(round) + ":")
                << "\n";
        write_line(out, columns, widths, [i](const column& c) { return c.cells[i]; });
    }
    const std::string same = any([](const json& r) { return r.contains("round"); })
                                 ? "same scenario, clients, server and round"
                                 : "same scenario, clients and server";
    std::string peers;
    for (const auto& n : compared)
        if (n != "floor") peers += (peers.empty() ? "" : ", ") + n;
    if (!compared.empty() && compared.front() == "floor")
        out << "vs floor: a row's ops/s over the floor's (requeue rows: the requeue floor's), " << same << "\n";
    if (!peers.empty()) out << "vs " << peers << ": zklock's ops/s over theirs, " << same << " (above 1: faster)\n";
    if (starred)
        out << "* out of order on a FIFO lock: request times taken on the clients, compared across sessions "
               "(docs/benchmarks.md)\n";
}

// A row without a latency: "scenario backend:" and its scalar fields, wrapped.
void write_fields(std::ostringstream& out, const json& row) {
    std::string line = row.value("scenario", std::string()) + " " + label(row) + ":";
    bool first = true;
    for (const auto& [key, value] : row.items()) {
        if (key == "scenario" || key == "backend" || value.is_structured()) continue;
        const auto field = key + " " + scalar(value);
        const std::string separator = first ? " " : ", ";
        if (!first && line.size() + separator.size() + field.size() > bench_table_width) {
            out << line << ",\n";
            line = "    " + field;
        } else {
            line += separator + field;
        }
        first = false;
    }
    out << line << "\n";
}

} // namespace

std::string format_table(const std::vector<json>& given, const std::set<std::string>& fifo) {
    auto rows = given;
    add_rate_ratios(rows);
    std::vector<const json*> timed;
    for (const auto& r : rows)
        if (r.contains("p50_us")) timed.push_back(&r);
    std::ostringstream out;
    if (!timed.empty()) write_table(out, timed, fifo);
    for (const auto& r : rows)
        if (!r.contains("p50_us")) write_fields(out, r);
    return out.str();
}

} // namespace zklock::cli
