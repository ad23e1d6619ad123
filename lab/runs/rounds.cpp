#include "runs/rounds.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace zklock::cli {
namespace {

using nlohmann::json;

std::string backend_of_row(const json& row) { return row.value("backend", std::string()); }

bool is_requeue_row(const json& row) { return row.value("requeue", false); }

bool is_median_row(const json& row) { return row.value("round", json()) == "median"; }

double median_of_numbers(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The median of `values` (the same field of each round): numbers, objects
// field by field, anything else the first's.
json median_value(const std::vector<const json*>& values) {
    const json& first = *values.front();
    if (first.is_number()) {
        std::vector<double> numbers;
        for (const auto* v : values)
            if (v->is_number()) numbers.push_back(v->get<double>());
        // Every round's a whole number, and so its median: kept whole (counts, clients).
        const bool whole = std::all_of(values.begin(), values.end(),
                                       [](const json* v) { return v->is_number_integer() || v->is_number_unsigned(); });
        const double m = median_of_numbers(numbers);
        if (whole && m == static_cast<double>(static_cast<long long>(m))) return static_cast<long long>(m);
        return m;
    }
    if (first.is_object()) {
        json out = json::object();
        for (const auto& [key, value] : first.items()) {
            std::vector<const json*> fields;
            for (const auto* v : values)
                if (v->is_object() && v->contains(key)) fields.push_back(&(*v)[key]);
            out[key] = fields.size() == values.size() ? median_value(fields) : value;
        }
        return out;
    }
    return first;
}

} // namespace

bool same_run(const json& a, const json& b) {
    for (const char* key : {"scenario", "recipe", "clients", "server", "ensemble", "busy", "round"}) {
        const json none;
        if ((a.contains(key) ? a[key] : none) != (b.contains(key) ? b[key] : none)) return false;
    }
    return true;
}

std::string rate_ratio_key(const std::string& backend) {
    return "ops_per_s_vs_" + (backend == "c-client floor" ? std::string("floor") : backend);
}

void add_rate_ratios(std::vector<json>& rows) {
    const auto rate = [](const json& r) {
        return r.contains("ops_per_s") && r["ops_per_s"].is_number() ? r["ops_per_s"].get<double>() : 0.0;
    };
    for (auto& row : rows) {
        if (is_median_row(row) || !(rate(row) > 0)) continue;
        const auto backend = backend_of_row(row);
        if (backend == "c-client floor") continue;
        const bool ours = backend == "zookeeper" && !row.value("naive", false);
        for (const auto* other : {"c-client floor", "curator", "kazoo"}) {
            const bool floor = std::string(other) == "c-client floor";
            if (!floor && !ours) continue;
            for (const auto& o : rows)
                if (backend_of_row(o) == other && same_run(row, o) && (!floor || is_requeue_row(o) == is_requeue_row(row)) &&
                    rate(o) > 0) {
                    row[rate_ratio_key(other)] = rate(row) / rate(o);
                    break;
                }
        }
    }
}

std::vector<json> median_rows(const std::vector<json>& rows) {
    std::vector<json> out;
    std::vector<bool> taken(rows.size(), false);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (taken[i] || is_median_row(rows[i])) continue;
        std::vector<const json*> kind;
        for (std::size_t j = i; j < rows.size(); ++j) {
            auto a = rows[i], b = rows[j];
            a.erase("round");
            b.erase("round");
            if (taken[j] || is_median_row(rows[j]) || backend_of_row(a) != backend_of_row(b) || is_requeue_row(a) != is_requeue_row(b) ||
                !same_run(a, b))
                continue;
            taken[j] = true;
            kind.push_back(&rows[j]);
        }
        auto m = median_value(kind);
        m["round"] = "median";
        m["rounds"] = kind.size();
        out.push_back(std::move(m));
    }
    return out;
}

} // namespace zklock::cli
