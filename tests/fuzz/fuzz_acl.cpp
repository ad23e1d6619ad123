// Fuzz target: an ACL in zkCli's syntax (--acl, zklock::parse_acl()).
// Properties: what parses writes back (to_string()) to text that parses to the
// same ACL, and writes the same text again; every entry has a scheme and
// permissions within cdrwa; a refusal has a reason; validate_acl() refuses an
// auth entry exactly when the session authenticates as nobody.
#include "fuzz_check.hpp"

#include <zklock/acl.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace zklock;
    using fuzz::check;
    const auto text = fuzz::text_of(data, size);

    std::error_code ec;
    std::string reason;
    const auto acl = parse_acl(text, ec, &reason);
    if (ec) {
        check(acl.empty() && !reason.empty(), "a refused ACL gives no entry and a reason");
        return 0;
    }
    check(!acl.empty(), "an accepted ACL has an entry");
    for (const auto& e : acl) {
        check(!e.scheme.empty(), "every entry has a scheme");
        check(e.perms != 0 && (e.perms & ~perms::all) == 0, "permissions within cdrwa");
        check(e.scheme.find(',') == std::string::npos && e.id.find(',') == std::string::npos, "no ',' inside an entry");
    }
    const auto written = to_string(acl);
    std::error_code again_ec;
    const auto again = parse_acl(written, again_ec);
    check(!again_ec && again == acl, "to_string() writes an ACL that parses back to it", written);
    check(to_string(again) == written, "to_string() writes one text for an ACL", written);

    const bool has_auth_entry =
        std::any_of(acl.begin(), acl.end(), [](const acl_entry& e) { return e.scheme == "auth"; });
    check(!validate_acl(acl, true), "a parsed ACL is valid for a session that authenticates");
    check(static_cast<bool>(validate_acl(acl, false)) == has_auth_entry,
          "an auth entry is refused exactly when the session authenticates as nobody");
    return 0;
}
