#include "ensemble/plan.hpp"

namespace zklock::cli {
namespace {

bool runs_mutex_scenario(const ensemble_request& r) {
    return r.recipe == "mutex" && (r.scenario == "uncontended" || r.scenario == "contended" || r.scenario == "all");
}

// What the request runs instead of a mutex scenario, for a refusal.
std::string other_run(const ensemble_request& r) {
    return r.recipe != "mutex" ? "--recipe " + r.recipe : "--scenario " + r.scenario;
}

std::string_view trimmed_cfg(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

} // namespace

std::optional<std::string> ensemble_refusal(const ensemble_request& r) {
    if (r.ensemble && *r.ensemble != 1 && *r.ensemble != 3 && *r.ensemble != 5)
        return "--ensemble takes 1 (a standalone server), 3 or 5 servers, not " + std::to_string(*r.ensemble);
    if (r.busy < 0 || r.busy > 16) return "--busy takes 0 to 16 processes, not " + std::to_string(r.busy);
    if (r.ensemble) {
        const std::string what = "--ensemble runs the mutex scenarios (uncontended, contended, all) with the peers on "
                                 "servers of its own";
        if (r.safety) return what + ": not with --safety, which starts its own to fault them";
        if (r.backend) return what + ": not with --backend (the backends' bench)";
        if (r.connect)
            return what + ": not with -c (several servers named by -c are run on as an ensemble: a follower, then the "
                          "leader)";
        if (!runs_mutex_scenario(r)) return what + ", not " + other_run(r);
    }
    if (r.busy > 0) {
        const std::string what = "--busy loads the host for the mutex scenarios (uncontended, contended, all)";
        if (r.safety) return what + ": not with --safety";
        if (r.backend) return what + ": not with --backend";
        if (r.report && !r.ensemble)
            return what + ": not with --report without --ensemble (the backends' report; --ensemble 1 --report writes "
                          "the peers report of a standalone server)";
        if (!runs_mutex_scenario(r)) return what + ", not " + other_run(r);
    }
    return std::nullopt;
}

serving_plan plan_serving_nodes(std::string_view connect, const std::vector<server_answer>& answers) {
    serving_plan plan;
    const auto as_given = [&](const std::string& why) {
        plan.nodes = {{"as given", std::string(connect), std::nullopt}};
        plan.notes = {why + ": the run is against -c as given"};
        return plan;
    };
    const auto said = [](const server_answer& a) {
        return a.server + (a.mode ? " is " + (*a.mode == "observer" ? "an observer" : "in mode " + *a.mode)
                                  : " gave no mode (" + a.why + ")");
    };
    if (answers.size() == 1) {
        const auto& a = answers.front();
        if (a.mode == "standalone") plan.nodes.push_back({"standalone", with_chroot_of(connect, a.server), 1});
        else if (a.mode == "leader" || a.mode == "follower")
            plan.nodes.push_back({*a.mode, with_chroot_of(connect, a.server), std::nullopt});
        else return as_given(said(a));
        return plan;
    }
    const server_answer* follower = nullptr;
    const server_answer* leader = nullptr;
    for (const auto& a : answers) {
        if (a.mode == "follower" && !follower) follower = &a;
        else if (a.mode == "leader" && !leader) leader = &a;
        else if (a.mode != "follower") plan.notes.push_back(said(a) + ": left out");
    }
    if (!follower && !leader) {
        std::string why;
        for (const auto& a : answers) why += (why.empty() ? "" : "; ") + said(a);
        return as_given(why.empty() ? "-c names no server" : why);
    }
    const int named = static_cast<int>(answers.size());
    if (follower) plan.nodes.push_back({"follower", with_chroot_of(connect, follower->server), named});
    else plan.notes.push_back("no server of -c is a follower: the leader alone is run on");
    if (leader) plan.nodes.push_back({"leader", with_chroot_of(connect, leader->server), named});
    else plan.notes.push_back("no server of -c is the leader: a follower alone is run on");
    return plan;
}

std::string with_chroot_of(std::string_view connect, std::string_view server) {
    const auto slash = connect.find('/');
    return std::string(server) + std::string(slash == std::string_view::npos ? std::string_view() : connect.substr(slash));
}

std::optional<std::string> zoo_cfg_value(const std::vector<std::string>& lines, std::string_view key) {
    std::optional<std::string> value;
    for (const auto& line : lines) {
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        if (trimmed_cfg(std::string_view(line).substr(0, eq)) == key)
            value = std::string(trimmed_cfg(std::string_view(line).substr(eq + 1)));
    }
    return value;
}

bool fsync_on(const std::vector<std::string>& lines) { return zoo_cfg_value(lines, "forceSync") != "no"; }

std::string zookeeper_version(std::string_view srvr_answer) {
    constexpr std::string_view key = "Zookeeper version: ";
    const auto at = srvr_answer.find(key);
    if (at == std::string_view::npos) return {};
    auto value = srvr_answer.substr(at + key.size());
    value = value.substr(0, value.find_first_of(",\r\n"));
    return std::string(trimmed_cfg(value));
}

std::string peers_report_stem(int ensemble, int busy) {
    std::string stem = ensemble == 1 ? "peers-standalone" : "peers-ensemble-" + std::to_string(ensemble);
    if (busy > 0) stem += "-busy" + std::to_string(busy);
    return stem;
}

} // namespace zklock::cli
