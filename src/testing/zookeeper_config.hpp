// zoo.cfg text shared by the standalone server and the ensemble.
#pragma once

#include "zklock/testing/test_certificates.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace zklock::testing::detail {

/// The lines every fixture server gets: tickTime, dataDir, clientPort on
/// 127.0.0.1, no admin server, the whitelisted four-letter words, no
/// per-client connection limit, and the session timeout bounds when > 0.
std::string common_zoo_config(const std::filesystem::path& data_dir, std::uint16_t port, int tick_time_ms,
                              int min_session_timeout_ms, int max_session_timeout_ms);
/// Each line followed by '\n'.
std::string config_lines(const std::vector<std::string>& lines);
/// Writes text to path (truncating). Throws std::system_error.
void write_text_file(const std::filesystem::path& path, const std::string& text);
/// classpath + ":" + logging, either may be empty.
std::string join_classpath(const std::string& classpath, const std::string& logging);

/// The jars a TLS server adds to its class path (Debian's zookeeper.jar names
/// no Netty codec or resolver in its manifest).
inline constexpr const char* netty_classpath = "/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar";
/// The zoo.cfg lines of a secure client port on 127.0.0.1 served with `c`.
std::string tls_zoo_config(std::uint16_t secure_port, const TestCertificates& c);
/// True when something accepts a TCP connection on 127.0.0.1:`port`.
bool accepts_connections(std::uint16_t port);

}  // namespace zklock::testing::detail
