#include "fsm/lock_set.hpp"
#include "fsm/path.hpp"
#include <zklock/error.hpp>

#include <algorithm>

namespace zklock::detail {

check_result validate_lock_set(const std::vector<std::string>& paths) {
    const auto refuse = [](std::string reason) { return check_result{make_error_code(errc::invalid_path), std::move(reason)}; };
    if (paths.empty()) return refuse("a lock set needs at least one lock path");
    for (const auto& p : paths)
        if (auto check = validate_lock_path(p); !check) return {check.error, check.reason + ": '" + p + "'"};
    for (std::size_t i = 0; i < paths.size(); ++i) {
        for (std::size_t j = 0; j < paths.size(); ++j) {
            if (i == j) continue;
            const auto& a = paths[i];
            const auto& b = paths[j];
            if (a == b && i < j) return refuse("the lock path '" + a + "' is twice in the set");
            if (b.size() > a.size() && b.compare(0, a.size(), a) == 0 && b[a.size()] == '/')
                return refuse("the lock path '" + b + "' is under '" + a +
                              "', another lock of the set (nested lock paths are refused)");
        }
    }
    return {};
}

set_decision decide_set(const std::vector<std::vector<std::string>>& listings, const std::vector<std::string>& my_names) {
    set_decision d;
    d.found = true;
    d.acquired = true;
    const auto n = std::min(listings.size(), my_names.size());
    d.queues.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        d.queues.push_back(decide(sorted_contenders(listings[i]), my_names[i], 1));
        if (!d.queues.back().found) d.missing.push_back(i);
        d.acquired = d.acquired && d.queues.back().acquired;
    }
    d.found = d.missing.empty() && n == my_names.size() && n == listings.size() && n > 0;
    d.acquired = d.acquired && d.found;
    return d;
}

set_recovery find_set_by_guid(const std::vector<std::vector<std::string>>& listings, std::string_view guid) {
    set_recovery r;
    std::size_t found = 0;
    for (const auto& children : listings) {
        r.names.push_back(find_by_guid(children, guid));
        found += r.names.back() ? 1 : 0;
    }
    if (found == 0) r.found = set_recovery::outcome::none;
    else if (found == listings.size()) r.found = set_recovery::outcome::all;
    else r.found = set_recovery::outcome::partial;
    return r;
}

std::string set_node_data(std::string_view data, const std::vector<std::string>& paths) {
    std::string out(data);
    out += set_data_marker;
    for (const auto& p : paths) out += "\n" + p;
    return out;
}

set_node_contents parse_set_node_data(std::string_view data) {
    const auto at = data.rfind(set_data_marker);
    if (at == std::string_view::npos) return {std::string(data), {}};
    set_node_contents out{std::string(data.substr(0, at)), {}};
    auto rest = data.substr(at + set_data_marker.size());
    while (!rest.empty()) {
        rest.remove_prefix(1);  // the newline
        const auto end = rest.find('\n');
        out.paths.emplace_back(rest.substr(0, end));
        if (end == std::string_view::npos) break;
        rest = rest.substr(end);
    }
    return out;
}

} // namespace zklock::detail
