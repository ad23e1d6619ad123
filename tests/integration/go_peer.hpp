// A go-zookeeper client as a child process for the interop tests: the harness
// tests/interop/go_peer.go, built when zklock is configured (Debian's golang-go
// and golang-github-samuel-go-zookeeper-dev), taking zk.Lock on a lock path.
#pragma once

#include "reporting_peer.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace zklock::test {

/// Why the go-zookeeper peer cannot run here, or nullopt when it can.
/// (Where it is built is fixed; what the configure step found is not compiled
/// in, so configuring again once the packages came builds the peer without
/// recompiling the tests.)
inline std::optional<std::string> go_peer_unavailable() {
    if (::access(ZKLOCK_GO_PEER, X_OK) != 0)
        return std::string(ZKLOCK_GO_PEER) +
               " was not built: go or go-zookeeper was missing when zklock was configured (scripts/setup installs "
               "golang-go and golang-github-samuel-go-zookeeper-dev; configure again)";
    return std::nullopt;
}

/// One go-zookeeper zk.Lock client as a child process (see go_peer.go for its report).
class GoPeer : public ReportingPeer {
public:
    GoPeer(const std::filesystem::path& dir, const std::string& connect, const std::string& path, std::string name,
           std::vector<std::string> args)
        : ReportingPeer("go", {program()}, dir, connect, path, std::move(name), std::move(args)) {}

private:
    static std::string program() { return ZKLOCK_GO_PEER; }
};

} // namespace zklock::test
