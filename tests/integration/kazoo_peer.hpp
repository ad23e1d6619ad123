// A kazoo client as a child process for the interop tests: /usr/bin/python3
// running tests/interop/kazoo_peer.py, whose report lines (one per event, with
// CLOCK_MONOTONIC stamps) the test reads from a file.
#pragma once

#include "reporting_peer.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace zklock::test {

inline constexpr const char* python = "/usr/bin/python3";
inline const std::filesystem::path harness = std::filesystem::path(ZKLOCK_INTEROP_DIR) / "kazoo_peer.py";

/// One kazoo client (tests/interop/kazoo_peer.py) as a child process.
class KazooPeer : public ReportingPeer {
public:
    KazooPeer(const std::filesystem::path& dir, const std::string& connect, const std::string& path, std::string name,
              std::vector<std::string> args)
        : ReportingPeer("kazoo", {python, harness.string()}, dir, connect, path, std::move(name), std::move(args)) {}
};

// kazoo 2.8 sees only its own "__lock__" names unless told another dialect's
// marker (extra_lock_patterns, kazoo >= 2.7.1): these make it queue behind zklock.
// (Markers start with '-': passed as --extra-lock-pattern=MARKER.)
inline const std::vector<std::string> kazoo_sees_zklock_mutex{"--extra-lock-pattern=-lock-"};
inline const std::vector<std::string> kazoo_reader_sees_zklock{"--extra-lock-pattern=-write-",
                                                               "--extra-lock-pattern=-lock-"};
inline const std::vector<std::string> kazoo_writer_sees_zklock{
    "--extra-lock-pattern=-write-", "--extra-lock-pattern=-read-", "--extra-lock-pattern=-lock-"};

} // namespace zklock::test
