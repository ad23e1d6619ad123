// Fuzz target: a duration as every duration option takes it (-w, --grace,
// --connect-timeout, ...: cli::parse_wait_duration(), parse_duration_in()).
// Properties: the value is what a model in exact decimal arithmetic makes of
// the text (DIGITS[.DIGITS][ms|s|m|h], a plain integer is milliseconds, a
// fraction needs a unit and rounds up, at most max_wait) and is refused
// exactly when the model refuses it; duration_text() writes every value in
// range as a text that reads back as it; a refusal quotes the text with its
// control characters escaped.
#include "fuzz_check.hpp"

#include "arguments.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace zklock;
using fuzz::check;

bool digit(char c) { return c >= '0' && c <= '9'; }

/// The model: nullopt when the text is no duration or longer than max_wait.
std::optional<std::int64_t> model_ms(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size() && digit(text[i])) ++i;
    const auto whole = text.substr(0, i);
    if (whole.empty()) return std::nullopt;
    std::string_view fraction;
    bool has_fraction = false;
    if (i < text.size() && text[i] == '.') {
        has_fraction = true;
        const auto start = ++i;
        while (i < text.size() && digit(text[i])) ++i;
        fraction = text.substr(start, i - start);
        if (fraction.empty()) return std::nullopt;
    }
    const auto unit = text.substr(i);
    std::int64_t unit_ms = 0;
    if (unit.empty() && !has_fraction) unit_ms = 1;
    else if (unit == "ms") unit_ms = 1;
    else if (unit == "s") unit_ms = 1000;
    else if (unit == "m") unit_ms = 60'000;
    else if (unit == "h") unit_ms = 3'600'000;
    else return std::nullopt;

    const auto significant = whole.find_first_not_of('0');
    const auto whole_digits = significant == std::string_view::npos ? std::string_view() : whole.substr(significant);
    if (whole_digits.size() > 10) return std::nullopt;
    std::int64_t whole_value = 0;
    for (const char c : whole_digits) whole_value = whole_value * 10 + (c - '0');

    // fraction * unit_ms, digit by digit from the right: the digits beyond the
    // fraction's length are whole milliseconds; any other non-zero digit rounds up.
    std::vector<int> digits;
    for (const char c : fraction) digits.push_back(c - '0');
    std::int64_t carry = 0;
    bool remainder = false;
    for (std::size_t k = digits.size(); k-- > 0;) {
        const std::int64_t p = digits[k] * unit_ms + carry;
        if (p % 10 != 0) remainder = true;
        carry = p / 10;
    }
    const std::int64_t total = whole_value * unit_ms + carry + (remainder ? 1 : 0);
    if (total > cli::max_wait.count()) return std::nullopt;
    return total;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = fuzz::text_of(data, size);
    if (size > 2048) return 0;

    const auto parsed = cli::parse_wait_duration(text);
    const auto model = model_ms(text);
    check(static_cast<bool>(parsed) == model.has_value(), "accepted exactly when the model accepts", parsed.error);
    if (parsed) {
        check(parsed.value.count() == *model, "the value is the model's", text);
        const auto written = cli::duration_text(parsed.value);
        const auto back = cli::parse_wait_duration(written);
        check(back && back.value == parsed.value, "duration_text() reads back", written);
    } else {
        check(!fuzz::has_control(parsed.error), "a refusal escapes control characters", parsed.error);
        check(parsed.value.count() == 0, "a refusal gives no value");
    }

    // A range and a value from the first bytes.
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    if (size >= 8) {
        std::memcpy(&a, data, 4);
        std::memcpy(&b, data + 4, 4);
    }
    const std::chrono::milliseconds lo{std::min(a, b) % (static_cast<std::uint32_t>(cli::max_wait.count()) + 1)};
    const std::chrono::milliseconds hi{std::max(a, b) % (static_cast<std::uint32_t>(cli::max_wait.count()) + 1)};
    const cli::duration_range range{std::min(lo, hi), std::max(lo, hi)};
    const auto in = cli::parse_duration_in(text, range);
    check(static_cast<bool>(in) == (parsed && parsed.value >= range.min && parsed.value <= range.max),
          "within the range exactly when the value is", in.error);
    check(!fuzz::has_control(in.error), "an out-of-range refusal escapes control characters", in.error);
    const std::chrono::milliseconds any{a % (static_cast<std::uint32_t>(cli::max_wait.count()) + 1)};
    const auto any_back = cli::parse_wait_duration(cli::duration_text(any));
    check(any_back && any_back.value == any, "every value in range reads back from duration_text()",
          cli::duration_text(any));

    (void)cli::wait_unit_hint("-w", text);
    (void)cli::closest_name(text.substr(0, 64), {"run", "lock", "status", "elect", "write"});
    return 0;
}
