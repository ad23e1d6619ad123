// Fuzz target: a connect string as `-c`/$ZKLOCK_CONNECT give it,
// host:port[,host:port...][/chroot]. Properties: a connect string the check
// accepts is never taken for a shell command; its chroot is an absolute path
// without empty, '.' or '..' segments and no trailing '/' ("/" alone is none:
// the C client drops it); the flock hint, which CLI11 prints as it is, has
// every control character escaped (the problem is escaped by notice(), which
// prints it); shortened(), through which messages quote it, fits a width.
#include "fuzz_check.hpp"

#include "connect_string.hpp"
#include "fsm/limits.hpp"
#include "terminal_text.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace zklock;
    using fuzz::check;
    const auto text = fuzz::text_of(data, size);

    const auto problem = cli::connect_string_problem(text);
    const bool command = cli::looks_like_a_command(text);
    const auto hint = cli::flock_command_hint("zklock run", "/x", text);
    check(!fuzz::has_control(hint), "the flock hint has control characters escaped", hint);
    // What every message quotes a text through: shortened() to a width fits
    // it as escape_control() shows it, and leaves a text that fits alone.
    const std::size_t width = size % 64;
    for (const auto kept : {cli::keep::start, cli::keep::end}) {
        const auto cut = cli::shortened(text, width, kept);
        const auto shown = cli::columns(cli::escape_control(text));
        check(shown > width || cut == text, "shortened() leaves a text that fits", text);
        check(cli::columns(cli::escape_control(cut)) <= width, "shortened() fits the width", cut);
    }
    const auto chroot = detail::chroot_of(text);
    check(fuzz::contains(text, chroot), "the chroot is part of the connect string");
    if (!problem.empty()) return 0;

    check(!command, "a connect string is no shell command", text);
    check(!text.empty(), "an empty connect string is refused");
    if (chroot.empty() || chroot == "/") return 0;  // "/" is no chroot, as the C client reads it
    check(text.ends_with(chroot), "the chroot ends the connect string", text);
    check(chroot.front() == '/', "a chroot is absolute", chroot);
    check(chroot.back() != '/', "a chroot has no trailing '/'", chroot);
    for (const auto& segment : fuzz::split(chroot.substr(1), '/'))
        check(!segment.empty() && segment != "." && segment != "..", "a chroot has no empty, '.' or '..' segment",
              chroot);
    return 0;
}
