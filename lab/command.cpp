// `bench`: a subcommand per scenario (scenarios/), and the flag form that
// `zklock bench` always took (--scenario, --recipe, --safety with every
// scenario's options), kept for scripts and out of the help. Both fill one
// bench_cli, and bench.cpp runs it.
#include "command.hpp"

#include "common.hpp"
#include "options.hpp"
#include "runs/result.hpp"
#include "safety/safety.hpp"
#include "scenarios/scenario.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace zklock::cli {

const std::vector<const scenario*>& every_scenario() {
    static const std::vector<const scenario*> all = {
        &uncontended_scenario(), &contended_scenario(), &all_scenario(),       &separate_scenario(),
        &mixed_scenario(),       &waiters_scenario(),   &locks_scenario(),     &multi_scenario(),
        &election_scenario(),    &semaphore_scenario(), &rwlock_scenario(),    &safety_scenario(),
    };
    return all;
}

namespace {

// The scenarios that stand for a value of `form`'s option, as CLI11 checks it.
std::vector<std::string> names_of(flag_form form) {
    std::vector<std::string> names;
    for (const auto* s : every_scenario())
        if (s->form == form) names.emplace_back(s->name);
    return names;
}

// The flag form's options, as no help shows them.
constexpr const char* flag_form_group = "Flag form";

// The flag form: every option once, each scenario's own ones included.
void add_flag_form(CLI::App& bench, bench_cli& c) {
    auto& o = c.zookeeper;
    add_zookeeper_options(bench, c);
    auto recipes = names_of(flag_form::recipe);
    recipes.insert(recipes.begin(), "mutex");
    bench.add_option("--recipe", o.recipe,
                     "mutex (the --scenario runs) | election (failover after resign) | semaphore | rwlock")
        ->check(CLI::IsMember(recipes))
        ->capture_default_str();
    bench.add_option("--scenario", o.scenario,
                     "uncontended | contended | all (recipe mutex); mixed (K zklock, K Curator and K kazoo clients on "
                     "one lock for --duration); waiters (--waiters queued on one lock, then drained); locks (--locks "
                     "held at once through one Session); multi: K clients each locking 2 or 3 of --lock-paths M paths "
                     "(MultiMutex, single locks sorted and in the caller's order; with --curator InterProcessMultiLock "
                     "sorted and unsorted); with --backend also separate (K clients on K locks)")
        ->check(CLI::IsMember(names_of(flag_form::scenario)))
        ->capture_default_str();
    add_clients_option(bench, c, clients_text);
    add_ops_option(bench, c, ops_text);
    add_json_option(bench, c);
    for (const auto& group : mutex_run_groups()) group.add(bench, c);
    auto* backend = add_backend_option(bench, c, backend_text);
    add_server_options(bench, c, backend);
    add_ttl_option(bench, c, ttl_text);
    add_report_option(bench, c, report_text);
    auto* safety = bench.add_flag(
        "--safety", c.backends.safety,
        "safety, not speed: the same faults against every backend (--backend, default all) and the naive Redis "
        "recipes, K client processes on one lock (--clients, default 3), each run judged by fenced and unfenced "
        "copies of the resource");
    for (const auto* s : every_scenario())
        if (s->add_own_options) s->add_own_options(bench, c, s->form == flag_form::safety ? safety : nullptr);
    // Out of `bench --help`: each scenario's help lists the options it takes
    // (the flag form stays for the scripts that use it).
    for (auto* option : bench.get_options())
        if (option != bench.get_help_ptr()) option->group(flag_form_group);
}

// Leaves the flag form's options out of `bench --help`. (CLI11's group("")
// hides an option too, but blanks its name in the errors that quote it.)
class flag_form_hiding_formatter : public CLI::Formatter {
public:
    std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override {
        if (group == flag_form_group) return {};
        return CLI::Formatter::make_group(std::move(group), is_positional, std::move(opts));
    }
};

// A scenario's subcommand: the shared groups it takes, then its own options.
CLI::App* add_scenario(CLI::App& bench, bench_cli& c, const scenario& s) {
    auto* cmd = bench.add_subcommand(s.name, s.description);
    const auto& t = s.takes;
    const auto text = [](const char* own, const char* general) { return own ? own : general; };
    if (t.zookeeper) add_zookeeper_options(*cmd, c);
    if (t.clients) add_clients_option(*cmd, c, text(s.clients_text, clients_text), s.general_defaults);
    if (t.ops) add_ops_option(*cmd, c, text(s.ops_text, ops_text), s.general_defaults);
    add_json_option(*cmd, c);
    for (const auto& group : mutex_run_groups())
        if (t.*group.taken) group.add(*cmd, c);
    if (t.backends) {
        auto* backend = add_backend_option(*cmd, c, text(s.backend_text, scenario_backend_text));
        if (t.servers) add_server_options(*cmd, c, backend);
        add_ttl_option(*cmd, c, text(s.ttl_text, scenario_ttl_text), s.general_defaults);
        add_report_option(*cmd, c, text(s.report_text, scenario_report_text));
    }
    if (s.add_own_options) s.add_own_options(*cmd, c, nullptr);
    return cmd;
}

// What choosing `s`'s subcommand stands for in the flag form.
void choose(bench_cli& c, const scenario& s) {
    switch (s.form) {
    case flag_form::scenario:
        c.zookeeper.scenario = s.name;
        c.zookeeper.scenario_given = true;
        break;
    case flag_form::recipe:
        c.zookeeper.recipe = s.name;
        break;
    case flag_form::safety:
        c.backends.safety = true;
        break;
    }
}

// The flag form's options given before a scenario's name (`bench --ops 5
// waiters`), or none.
std::string given_before(const CLI::App& bench) {
    std::string names;
    for (const auto* option : bench.get_options())
        if (option->count() > 0) names += (names.empty() ? "" : ", ") + option->get_name();
    return names;
}

} // namespace

void add_bench(CLI::App& app, int& exit_code) {
    add_safety_client(app, exit_code);  // the client processes of `bench --safety` (hidden)
    auto c = std::make_shared<bench_cli>();
    auto* bench = app.add_subcommand("bench", bench_description);
    bench->require_subcommand(0, 1);
    add_flag_form(*bench, *c);
    auto scenarios = std::make_shared<std::vector<std::pair<CLI::App*, const scenario*>>>();
    for (const auto* s : every_scenario()) scenarios->emplace_back(add_scenario(*bench, *c, *s), s);
    bench->formatter(std::make_shared<flag_form_hiding_formatter>());
    const auto name = app.get_name();
    bench->footer("Without a scenario: " + name + " bench uncontended. A scenario takes its options after its name,\n"
                  "and its help lists them: " + name + " bench contended --help. Without --json the rows are\n"
                  "one table, with zklock's rate over the floor's and each peer's.");
    // Runs `cmd`'s bench, then prints the rows it left for the table (runs/result.hpp).
    const auto run = [c](const CLI::App& cmd) {
        int status = 0;
        try {
            status = run_bench(*c, cmd);
        } catch (...) {
            print_table();
            throw;
        }
        print_table();
        return status;
    };
    bench->callback([bench, c, scenarios, run, &exit_code] {
        for (const auto& [cmd, s] : *scenarios) {
            if (!cmd->parsed()) continue;
            if (const auto before = given_before(*bench); !before.empty()) {
                notice("bench: " + before + " given before the scenario " + s->name +
                       ": give the options after its name");
                exit_code = exit_usage;
                return;
            }
            choose(*c, *s);
            exit_code = run(*cmd);
            return;
        }
        c->zookeeper.scenario_given = given(*bench, "--scenario");
        exit_code = run(*bench);
    });
}

} // namespace zklock::cli
