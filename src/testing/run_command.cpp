#include "testing/run_command.hpp"

#include "support/cloexec_file.hpp"

#include "zklock/testing/process.hpp"

#include <fstream>
#include <iterator>

#include <sys/wait.h>

namespace zklock::testing::detail {

bool CommandResult::ok() const noexcept { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

CommandResult run_command(std::vector<std::string> argv, std::chrono::milliseconds timeout) {
    TempDir dir("zklock-cmd-");
    const auto out = dir.path() / "output";
    ChildProcessOptions options;
    options.output_path = out;
    options.env = {{"LC_ALL", "C"}};
    ChildProcess child(std::move(argv), std::move(options));
    CommandResult result;
    if (auto status = child.wait_exit(timeout)) {
        result.status = *status;
    } else {
        result.status = child.kill9();
    }
    result.output = read_file_cloexec(out);
    return result;
}

}  // namespace zklock::testing::detail
