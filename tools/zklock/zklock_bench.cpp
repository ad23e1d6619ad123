// zklock bench and zklock chaos: the commands of the zklock-bench program,
// which zklock runs as git runs git-foo: zklock-bench from zklock's own
// directory (the build tree's tools/zklock, or the install's bin/) replaces
// zklock, given `bench` or `chaos` and every word after it. So zklock itself
// links no lock backend's client library and none of the bench's code.
//
// Nothing leaks into it: every descriptor zklock opens is close-on-exec, and
// zklock-bench redacts the secrets on its own command line, as zklock does.
#include "commands.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace zklock::cli {
namespace {

// Registers `name`, which takes every word after it as zklock-bench's
// (main() runs zklock-bench before parsing; this is for help and the man page).
void add_bench_command(CLI::App& app, int& exit_code, const std::string& name, const std::string& description) {
    auto* cmd = app.add_subcommand(name, description);
    cmd->prefix_command();
    cmd->set_help_flag();  // `zklock bench --help` is zklock-bench's help
    cmd->callback([cmd, name, &exit_code] {
        std::vector<std::string> words{name};
        const auto rest = cmd->remaining();
        words.insert(words.end(), rest.begin(), rest.end());
        exit_code = run_zklock_bench(words);
    });
}

} // namespace

bool is_bench_command(const std::string& name) { return name == "bench" || name == "chaos"; }

void add_bench(CLI::App& app, int& exit_code) { add_bench_command(app, exit_code, "bench", bench_description); }

void add_chaos(CLI::App& app, int& exit_code) { add_bench_command(app, exit_code, "chaos", chaos_description); }

int run_zklock_bench(const std::vector<std::string>& words) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        notice("cannot find zklock-bench: /proc/self/exe: " + ec.message());
        return exit_unavailable;
    }
    const auto program = self.parent_path() / "zklock-bench";
    // argv[0] "zklock": zklock-bench then names itself so in usage lines, help
    // and reports, and `ps` shows `zklock bench ...` as before.
    std::vector<char*> argv{const_cast<char*>("zklock")};
    for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    std::cout.flush();
    std::cerr.flush();
    ::execv(program.c_str(), argv.data());
    const int err = errno;
    if (err == ENOENT)
        notice("bench and chaos are commands of zklock-bench, which is not installed beside zklock (looked for " +
               program.string() + ")");
    else
        notice("could not run " + program.string() + ": " + std::strerror(err));
    return exit_unavailable;
}

} // namespace zklock::cli
