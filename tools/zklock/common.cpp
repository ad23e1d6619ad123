#include "commands.hpp"

#include <cstdlib>

namespace zklock::cli {

std::string default_connect() {
    const char* env = std::getenv("ZKLOCK_CONNECT");
    return env && *env ? env : "127.0.0.1:2181";
}

void add_connect_option(CLI::App& cmd, std::string& connect) {
    connect = default_connect();
    cmd.add_option("-c,--connect", connect, "ZooKeeper hosts, host:port[,host:port...][/chroot] ($ZKLOCK_CONNECT)")
        ->capture_default_str();
}

} // namespace zklock::cli
