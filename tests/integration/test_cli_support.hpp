// Shared helpers of the CLI tests (test_cli.cpp, test_cli_security.cpp): the
// built `zklock` binary run as a separate process against real servers.
#pragma once

#include "support.hpp"

#include <zklock/testing/process.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace zklock::test::cli {

using std::chrono::milliseconds;
using zklock::testing::ChildProcess;
using zklock::testing::ChildProcessOptions;
using zklock::testing::TempDir;

/// Whether `text` holds `part`.
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The first line of a file once it is complete (a writer may be halfway through).
inline std::optional<std::string> first_line(const std::filesystem::path& p) {
    const auto text = read_file(p);
    const auto end = text.find('\n');
    if (end == std::string::npos) return std::nullopt;
    return text.substr(0, end);
}

inline std::string wait_for_line(const std::filesystem::path& p, milliseconds timeout = 30s) {
    std::optional<std::string> line;
    EXPECT_TRUE(wait_until([&] { return (line = first_line(p)).has_value(); }, timeout)) << "nothing in " << p;
    return line.value_or("");
}

// Gone, or a zombie nobody has reaped yet (an orphan's new parent may never reap it).
inline bool process_gone(pid_t pid) {
    const auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return true;
    return stat[close + 2] == 'Z' || stat[close + 2] == 'X';
}

// The complete lines of a file so far.
inline std::vector<std::string> complete_lines(const std::filesystem::path& p) {
    std::vector<std::string> out;
    std::istringstream in(read_file(p));
    std::string line;
    while (std::getline(in, line))
        if (!in.eof()) out.push_back(line);
    return out;
}

inline std::string node_name(const std::string& node_path) { return node_path.substr(node_path.rfind('/') + 1); }

// Runs the built `zklock` binary; each run's stdout and stderr go to <name>.out in a temp dir.
class Cli {
public:
    ChildProcess start(std::vector<std::string> args, const std::string& name = "cli",
                       std::vector<std::pair<std::string, std::string>> env = {}) {
        return start_via({}, std::move(args), name, std::move(env));
    }
    /// Same, with `wrapper` in front of zklock (e.g. a shell that opens a descriptor, then execs zklock).
    ChildProcess start_via(std::vector<std::string> wrapper, std::vector<std::string> args,
                           const std::string& name = "cli", std::vector<std::pair<std::string, std::string>> env = {}) {
        args.insert(args.begin(), ZKLOCK_CLI_PATH);
        args.insert(args.begin(), wrapper.begin(), wrapper.end());
        ChildProcessOptions o;
        o.output_path = output_path(name);
        o.env = std::move(env);
        return ChildProcess(std::move(args), o);
    }
    std::filesystem::path file(const std::string& name) const { return dir_.path() / name; }
    std::filesystem::path output_path(const std::string& name = "cli") const { return file(name + ".out"); }
    std::string output(const std::string& name = "cli") const { return read_file(output_path(name)); }
    const std::filesystem::path& dir() const { return dir_.path(); }

private:
    TempDir dir_{"zklock-cli-"};
};

// The exit status of the child; -N when a signal N killed it (so that a zklock that
// died of SIGTERM is not taken for one that handled it and exited with 143);
// -1000 when it did not exit in time.
inline int exit_code(ChildProcess& p, milliseconds timeout = 30s) {
    const auto status = p.wait_exit(timeout);
    if (!status) return -1000;
    if (WIFEXITED(*status)) return WEXITSTATUS(*status);
    if (WIFSIGNALED(*status)) return -WTERMSIG(*status);
    return -2000;
}

class CliTest : public ServerTest {
protected:
    std::vector<std::string> run_args(const std::string& path, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"run", "-c", server_->connect_string()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.push_back(path);
        args.push_back("--");
        return args;
    }
    std::size_t queue_length(const std::string& path) {
        auto observer = connect();
        return list_contenders(*observer, path).size();
    }

    Cli cli_;
};

} // namespace zklock::test::cli
