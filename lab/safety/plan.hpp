// zklock bench --safety: what runs. The rows (every lock backend, and the two
// naive Redis recipes as anti-examples), the faults, which fault applies to
// which row and why not, and the checks of the options. Pure; unit-tested.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::cli::safety {

/// The naive Redis recipes docs/comparison.md calls unsafe: run by the bench
/// against a real redis-server as extra rows, never offered as backends.
inline constexpr std::string_view naive_setnx_expire = "naive-setnx-expire";
inline constexpr std::string_view naive_setnx_getset = "naive-setnx-getset";

/// Every row in report order: the backends, then the anti-examples.
const std::vector<std::string_view>& row_names();
bool is_anti_example(std::string_view row) noexcept;
/// False for a row whose grants carry no fencing token (memcached): its fenced
/// copy of the resource cannot be used, and its fence columns are n/a.
bool has_fencing_token(std::string_view row) noexcept;
/// The lease a row runs with: `ttl`, but at least 2 s for memcached, and whole seconds, at least 2, for etcd.
std::chrono::milliseconds row_ttl(std::string_view row, std::chrono::milliseconds ttl) noexcept;
/// One sentence: what the row's clients do (the recipe, its token).
std::string_view row_description(std::string_view row);

/// The faults, in report order.
const std::vector<std::string_view>& fault_names();
/// One sentence: what the fault does (durations left to the report's settings).
std::string_view fault_description(std::string_view fault);
/// Why `fault` does not apply to `row` (flock has no server and no network; only
/// Redis loses its data when it restarts), or nullopt when it does.
std::optional<std::string> not_applicable(std::string_view row, std::string_view fault);

/// The fault happens when a holder reaches this point: before the second write
/// of its critical section, or (SETNX+EXPIRE, killed holder) between SETNX and
/// EXPIRE, where the recipe is at its weakest.
enum class trigger { second_write, between_commands };
trigger trigger_of(std::string_view row, std::string_view fault) noexcept;

/// The options of a safety run that the checks below look at.
struct safety_settings {
    int clients = 3;
    std::chrono::milliseconds ttl{1000};             ///< lease and ZooKeeper session timeout
    std::chrono::milliseconds fault_duration{3000};  ///< pause, outage, partition
    std::chrono::milliseconds write_interval{50};    ///< between two writes of a critical section
    int grants = 4;                                  ///< grants to see before the fault, and after it
};

/// Why these settings cannot run (the CLI exits 64), or nullopt.
std::optional<std::string> check_settings(const safety_settings& s);

/// "all" expanded and duplicates dropped, in report order; an unknown name is
/// an error (returned in `error`, the result empty).
std::vector<std::string> expand(const std::vector<std::string>& asked, const std::vector<std::string_view>& known,
                                std::string_view what, std::string& error);

/// How long a run waits for the lock to be granted again after the fault
/// before it calls the lock stuck.
std::chrono::milliseconds recovery_limit(const safety_settings& s) noexcept;

}  // namespace zklock::cli::safety
