// Fuzz target: a lock path as a user or a peer's listing gives it. Properties:
// a path the validator accepts is absolute, at most max_lock_path_length
// bytes, without empty, '.' or '..' segments, not under /zookeeper, valid
// UTF-8 without control characters or code points the server refuses; its
// ancestors are the prefixes before each '/', valid lock paths too; a lock set
// of distinct valid paths is refused only for a path under another.
#include "fuzz_check.hpp"

#include "fsm/lock_set.hpp"
#include "fsm/path.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

/// The code points of `text` when it is valid UTF-8 (shortest forms, no
/// surrogates), else empty with `ok` false.
std::vector<char32_t> code_points(std::string_view text, bool& ok) {
    std::vector<char32_t> out;
    ok = true;
    for (std::size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        const int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (len == 0 || i + static_cast<std::size_t>(len) > text.size()) return ok = false, out;
        char32_t cp = len == 1 ? b : b & (0x7f >> len);
        for (int k = 1; k < len; ++k) {
            const auto c = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
            if ((c >> 6) != 2) return ok = false, out;
            cp = (cp << 6) | (c & 0x3f);
        }
        const char32_t shortest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < shortest[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return ok = false, out;
        out.push_back(cp);
        i += static_cast<std::size_t>(len);
    }
    return out;
}

bool refused_code_point(char32_t cp) {
    return cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xf8ff) ||
           (cp >= 0xfff0 && cp <= 0xffff) || cp > 0xffff;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace zklock;
    using fuzz::check;
    const auto text = fuzz::text_of(data, size);
    const auto paths = fuzz::split(text, '\n');

    std::vector<std::string> valid;
    for (const auto& path : paths) {
        const auto result = detail::validate_lock_path(path);
        if (!result) {
            check(!result.reason.empty(), "a refused path has a reason", path);
            continue;
        }
        valid.push_back(path);
        check(path.size() >= 2 && path.size() <= detail::max_lock_path_length, "a lock path's length", path);
        check(path.front() == '/' && path.back() != '/', "a lock path is absolute, no trailing '/'", path);
        check(path != "/zookeeper" && !path.starts_with("/zookeeper/"), "no lock path under /zookeeper", path);
        for (const auto& segment : fuzz::split(std::string_view(path).substr(1), '/'))
            check(!segment.empty() && segment != "." && segment != "..", "no empty, '.' or '..' segment", path);
        bool utf8 = false;
        for (const auto cp : code_points(path, utf8))
            check(!refused_code_point(cp), "no code point the server refuses", path);
        check(utf8, "a lock path is valid UTF-8", path);

        const auto ancestors = detail::ancestors(path);
        std::vector<std::string> expected;
        for (std::size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
            expected.push_back(path.substr(0, at));
        check(ancestors == expected, "the ancestors are the prefixes before each '/'", path);
        for (const auto& a : ancestors)
            check(static_cast<bool>(detail::validate_lock_path(a)), "an ancestor is valid", a);
        check(detail::child_path(path, "c") == path + "/c", "child_path");
    }

    if (valid.empty() || valid.size() > 16) return 0;
    bool nested_or_twice = false;
    for (const auto& a : valid)
        for (const auto& b : valid)
            if (&a != &b && (a == b || b.starts_with(a + "/"))) nested_or_twice = true;
    check(static_cast<bool>(detail::validate_lock_set(valid)) == !nested_or_twice,
          "a set of valid paths is refused exactly for a path twice or under another");
    return 0;
}
