// The ZooKeeper C client's process-wide log level, set only when the program
// asks (zklock::set_zookeeper_client_log_level); see zklock/log.hpp.
#include <zklock/log.hpp>

#include <zookeeper.h>
#include <zookeeper_log.h>

namespace zklock {

void set_zookeeper_client_log_level(log_level level) noexcept {
    // The C client has no "none": 0 is below its ERROR (1), so nothing is formatted.
    zoo_set_debug_level(static_cast<ZooLogLevel>(static_cast<int>(level)));
}

log_level zookeeper_client_log_level() noexcept {
    const int level = static_cast<int>(logLevel);
    if (level <= 0) return log_level::none;
    if (level >= static_cast<int>(log_level::debug)) return log_level::debug;
    return static_cast<log_level>(level);
}

} // namespace zklock
