// Fuzz target: the data other clients may write into a lock directory or a
// lock node, as zklock reads it: the lock-delay release record, a lock set's
// list of paths, a peer semaphore's permit count. Properties: a record written
// over any data reads back as written, with the data beside it unchanged; a
// set's node data reads back as the user's data and its paths.
#include "fuzz_check.hpp"

#include "fsm/dialect.hpp"
#include "fsm/lock_delay.hpp"
#include "fsm/lock_set.hpp"
#include "fsm/node_stat.hpp"
#include "fsm/path.hpp"

#include <zookeeper.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace zklock;
    using fuzz::check;
    const auto text = fuzz::text_of(data, size);

    std::int32_t released = 0;
    if (size >= sizeof released) std::memcpy(&released, data, sizeof released);
    const auto before = detail::split_release_marker(text);
    const auto written = detail::with_release_marker(text, released);
    const auto after = detail::split_release_marker(written);
    check(after.released == released, "a release record reads back as written", written);
    check(after.base == before.base, "a release record keeps the data beside it", written);
    check(detail::with_release_marker(written, released) == written, "writing the same record twice changes nothing");

    detail::node_stat st{};
    st.num_children = static_cast<std::int32_t>(size);
    (void)detail::directory_read(ZOK, text, st);
    (void)detail::foreign_semaphore_data(text);

    const auto contents = detail::parse_set_node_data(text);
    for (const auto& p : contents.paths) check(p.find('\n') == std::string::npos, "a set's path is one line");

    // The input split at its first NUL: the user's data, then lock paths one a line.
    const auto nul = text.find('\0');
    const auto user = text.substr(0, nul);
    std::vector<std::string> paths;
    if (nul != std::string_view::npos)
        for (auto& p : fuzz::split(text.substr(nul + 1), '\n'))
            if (detail::validate_lock_path(p)) paths.push_back(std::move(p));
    const auto back = detail::parse_set_node_data(detail::set_node_data(user, paths));
    check(back.data == user, "a set's node data keeps the user's data");
    check(back.paths == paths, "a set's node data keeps its paths");
    return 0;
}
