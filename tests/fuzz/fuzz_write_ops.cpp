// Fuzz target: the words of `zklock write` (one a line: create PATH DATA,
// set:3 PATH DATA, ...) and a ZKLOCK_LOCK_NODE value. Properties: stdin is
// read at most once, for a DATA of "-"; accepted words give operations that,
// written back as words, parse to the same operations; the lock nodes are the
// value's non-empty lines.
#include "fuzz_check.hpp"

#include "write_ops.hpp"

#include <zklock/guarded_write.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace zklock;
using fuzz::check;

bool same(const guarded_op& a, const guarded_op& b) {
    return a.type == b.type && a.path == b.path && a.data == b.data && a.version == b.version;
}

/// The words that give `op` (its data given as it is).
void write_words(const guarded_op& op, std::vector<std::string>& words) {
    const char* verb = "";
    bool data = false;
    switch (op.type) {
    case guarded_op::kind::create: verb = "create"; data = true; break;
    case guarded_op::kind::sequential: verb = "sequential"; data = true; break;
    case guarded_op::kind::set_data: verb = "set"; data = true; break;
    case guarded_op::kind::erase: verb = "delete"; break;
    case guarded_op::kind::check: verb = "check"; break;
    }
    words.push_back(op.version >= 0 ? std::string(verb) + ":" + std::to_string(op.version) : std::string(verb));
    words.push_back(op.path);
    if (data) words.push_back(op.data);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = fuzz::text_of(data, size);
    auto words = fuzz::split(text, '\n');
    if (words.size() > 256) return 0;

    int reads = 0;
    const auto parsed = cli::parse_write_ops(words, [&] {
        ++reads;
        return std::string("from stdin");
    });
    check(reads <= 1, "stdin is read at most once");
    if (parsed.error.empty()) {
        check(!parsed.ops.empty(), "accepted words give an operation");
        std::size_t dashes = 0;
        for (const auto& w : words) dashes += w == "-";
        check(reads == 0 || dashes >= 1, "stdin is read only for '-'");
        std::vector<std::string> again;
        for (const auto& op : parsed.ops) {
            check(op.version >= -1, "a version is -1 or from 0");
            write_words(op, again);
        }
        const auto back = cli::parse_write_ops(again, [] { return std::string("-"); });
        check(back.error.empty() && back.ops.size() == parsed.ops.size(), "operations written back parse", back.error);
        for (std::size_t i = 0; i < back.ops.size(); ++i)
            check(same(back.ops[i], parsed.ops[i]), "operations written back parse to themselves");
    }

    const auto nodes = cli::lock_nodes_of(std::string(text));
    std::size_t expected = 0;
    for (auto line : fuzz::split(text, '\n')) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) {
            check(expected < nodes.size() && nodes[expected] == line, "the lock nodes are the non-empty lines", line);
            ++expected;
        }
    }
    check(nodes.size() == expected, "one lock node per non-empty line");
    return 0;
}
