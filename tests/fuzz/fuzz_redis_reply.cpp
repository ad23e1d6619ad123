// Fuzz target: what a Redis server sends back, parsed by hiredis's reader
// (as the connection's replies are) and converted by the backends
// (backends/redis/reply.hpp). The bytes arrive in pieces of a size the first
// byte picks. Properties: the copy has the reply's type, integer and text and
// its elements in order, at every depth; a push is read only from an array
// whose first two elements are texts, and carries them; an error reply's text
// maps to a code.
#include "fuzz_check.hpp"

#include "backends/redis/redis_address.hpp"
#include "backends/redis/reply.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

using namespace zklock::detail;
using zklock::fuzz::check;

void same(const redisReply* r, const redis::reply& copy) {
    using kind = redis::reply::kind;
    switch (r->type) {
    case REDIS_REPLY_STRING: check(copy.type == kind::string, "a string stays a string"); break;
    case REDIS_REPLY_ARRAY: check(copy.type == kind::array, "an array stays an array"); break;
    case REDIS_REPLY_INTEGER: check(copy.type == kind::integer, "an integer stays an integer"); break;
    case REDIS_REPLY_STATUS: check(copy.type == kind::status, "a status stays a status"); break;
    case REDIS_REPLY_ERROR: check(copy.type == kind::error, "an error stays an error"); break;
    default: check(copy.type == kind::nil, "anything else is nil"); break;
    }
    check(copy.integer == r->integer, "the integer is copied");
    check(r->str ? copy.str == std::string_view(r->str, r->len) : copy.str.empty(), "the text is copied");
    if (r->type != REDIS_REPLY_ARRAY) {
        check(copy.elements.empty(), "only an array has elements");
        return;
    }
    check(copy.elements.size() == r->elements, "every element is copied");
    for (std::size_t i = 0; i < r->elements; ++i) same(r->element[i], copy.elements[i]);
}

void check_push(const redisReply* r) {
    const auto push = redis::push_of(r);
    const bool texts = r->type == REDIS_REPLY_ARRAY && r->elements >= 2 && r->element[0]->str && r->element[1]->str;
    check(push.has_value() == texts, "a push is an array that starts with two texts");
    if (!push) return;
    check(push->kind == std::string_view(r->element[0]->str, r->element[0]->len), "the push's kind");
    check(push->channel == std::string_view(r->element[1]->str, r->element[1]->len), "the push's channel");
    if (push->kind != "message" || r->elements < 3 || !r->element[2]->str)
        check(push->payload.empty(), "only a message has a payload");
    else
        check(push->payload == std::string_view(r->element[2]->str, r->element[2]->len), "the message's payload");
}

/// An array header of a million elements or more ("*1000000"): hiredis 0.14
/// allocates the element array as soon as it reads the header, before any
/// element arrives (5 GB for "*666666666"), in its own reader, which is not
/// what this target fuzzes.
bool huge_array(std::string_view bytes) {
    for (auto at = bytes.find('*'); at != std::string_view::npos; at = bytes.find('*', at + 1)) {
        std::size_t end = at + 1;
        while (end < bytes.size() && bytes[end] >= '0' && bytes[end] <= '9') ++end;
        if (end - at - 1 >= 7) return true;
    }
    return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0 || huge_array({reinterpret_cast<const char*>(data), size})) return 0;
    const std::size_t piece = data[0] % 16 + 1;
    ++data;
    --size;
    redisReader* reader = redisReaderCreate();
    if (!reader) return 0;
    for (std::size_t at = 0; at < size || at == 0;) {
        const std::size_t n = std::min(piece, size - at);
        if (n > 0 && redisReaderFeed(reader, reinterpret_cast<const char*>(data + at), n) != REDIS_OK) break;
        at += n;
        void* out = nullptr;
        bool failed = false;
        while (true) {
            if (redisReaderGetReply(reader, &out) != REDIS_OK) {
                failed = true;
                break;
            }
            if (!out) break;
            const auto* r = static_cast<const redisReply*>(out);
            const auto copy = redis::convert(r);
            same(r, copy);
            check_push(r);
            if (r->type == REDIS_REPLY_ERROR) (void)redis_error_code(copy.str);
            freeReplyObject(out);
        }
        if (failed || n == 0) break;
    }
    redisReaderFree(reader);
    return 0;
}
