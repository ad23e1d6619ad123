// Fencing on the resource's side: the rule every validator zklock ships applies
// (PostgresFence, RedisFence, `zklock fence`), the result they report, and the
// text form of a token ($ZKLOCK_FENCING_TOKEN).
//
// A lock cannot stop a holder that was paused (GC, swap, SIGSTOP) past its
// session timeout from writing after someone else took over. The resource can:
// every write carries the writer's fencing token (Mutex::fencing_token(),
// Lock::fencing_token(), Leadership::epoch, $ZKLOCK_FENCING_TOKEN), the
// resource keeps the highest token it has accepted, and refuses a write that
// carries a lower one. The paused holder's late write is then refused, because
// the next holder's token is higher and has been seen.
//
// Tokens are comparable only when they come from one source: one ZooKeeper
// ensemble (the czxid of any lock node on it: comparable across every lock of
// the ensemble), or one Redis / PostgreSQL backend's counter for one lock name.
// Never guard one resource with tokens from two backends or two ensembles.
//
// Header only: no library to link.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace zklock {

/// What a fenced write did.
struct fenced_write_result {
    /// True: the value was written and the resource now records the writer's
    /// token. False: refused, nothing written: the resource has already
    /// accepted a newer token (the writer's lock was lost and a later holder
    /// has written since). A refusal is an answer, not an error.
    bool applied = false;
    /// The token the resource records after the call: the writer's own when
    /// applied, the newer one that refused it otherwise.
    std::int64_t stored_token = 0;

    /// True when the write was admitted.
    explicit operator bool() const noexcept { return applied; }
    /// Equal when every field is.
    friend bool operator==(const fenced_write_result&, const fenced_write_result&) = default;
};

/// A fenced resource's value and the token of the write that put it there.
struct fenced_value {
    /// The token of the write that stored `value` (0: never written).
    std::int64_t fencing_token = 0;
    /// The value last admitted.
    std::string value;
    /// Equal when every field is.
    friend bool operator==(const fenced_value&, const fenced_value&) = default;
};

/// The rule: a write carrying `token` is admitted when the resource has no
/// token yet, or when `token` is greater than or equal to the stored one.
/// Equal is admitted so that one holder may write several times under one
/// grant; a lower token is refused.
constexpr bool fence_admits(std::int64_t token, std::optional<std::int64_t> stored) noexcept {
    return !stored || token >= *stored;
}

/// The outcome of a write under the rule, given what the resource recorded
/// before it: applied with `token`, or refused by the stored one.
constexpr fenced_write_result fence_decide(std::int64_t token, std::optional<std::int64_t> stored) noexcept {
    if (fence_admits(token, stored)) return {true, token};
    return {false, *stored};
}

/// A token as the validators accept it: positive (zklock never grants 0:
/// fencing_token() is 0 only while the lock is not held).
constexpr bool valid_fencing_token(std::int64_t token) noexcept { return token > 0; }

/// Parses the text form of a token (what `zklock run` puts in
/// $ZKLOCK_FENCING_TOKEN): decimal digits only, no sign, no space, no leading
/// zero, 1 to 9223372036854775807. On failure returns nullopt and, when
/// `reason` is given, says what is wrong in words that quote the text.
inline std::optional<std::int64_t> parse_fencing_token(std::string_view text, std::string* reason = nullptr) {
    auto refuse = [&](const char* why) -> std::optional<std::int64_t> {
        if (reason) {
            std::string shown;
            for (const char c : text.substr(0, 40)) {
                const auto u = static_cast<unsigned char>(c);
                shown += u < 0x20 || u == 0x7f ? '?' : c;
            }
            if (text.size() > 40) shown += "...";
            *reason = "invalid fencing token '" + shown + "': " + why;
        }
        return std::nullopt;
    };
    if (text.empty()) return refuse("it is empty");
    for (const char c : text)
        if (c < '0' || c > '9') return refuse("a token is a positive decimal integer (digits only)");
    if (text.front() == '0') return refuse("a token is positive and has no leading zero (0: the lock was not held)");
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size())
        return refuse("larger than the largest token, 9223372036854775807");
    return value;
}

} // namespace zklock
