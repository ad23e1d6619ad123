// What the Redis backends keep of a hiredis reply: a copy of the parts the
// lock scripts and pub/sub need, made on hiredis's callback and handled later
// on the strand. Pure functions of a redisReply; the fuzz target
// tests/fuzz/fuzz_redis_reply.cpp feeds them replies parsed from raw bytes.
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace zklock::detail::redis {

/// A copy of the parts of a hiredis reply the lock scripts need.
struct reply {
    enum class kind { string, array, integer, nil, status, error } type = kind::nil;
    long long integer = 0;
    std::string str;
    std::vector<reply> elements;
};

/// The reply `r` copied: its type (a type hiredis has and zklock does not read
/// is nil), integer, text and, for an array, its elements in order.
inline reply convert(const redisReply* r) {
    reply out;
    switch (r->type) {
    case REDIS_REPLY_STRING: out.type = reply::kind::string; break;
    case REDIS_REPLY_ARRAY: out.type = reply::kind::array; break;
    case REDIS_REPLY_INTEGER: out.type = reply::kind::integer; break;
    case REDIS_REPLY_STATUS: out.type = reply::kind::status; break;
    case REDIS_REPLY_ERROR: out.type = reply::kind::error; break;
    default: out.type = reply::kind::nil; break;
    }
    out.integer = r->integer;
    if (r->str) out.str.assign(r->str, r->len);
    if (r->type == REDIS_REPLY_ARRAY) {
        out.elements.reserve(r->elements);
        for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
    }
    return out;
}

/// A pub/sub push: "message" (with its payload), "subscribe", "unsubscribe".
struct push_message {
    std::string kind;
    std::string channel;
    std::string payload;  ///< a message's; empty for the others
};

/// The push a reply on a subscribed connection carries: an array whose first
/// two elements are texts (kind, channel), and for a "message" a third text
/// (the payload). nullopt for any other reply.
inline std::optional<push_message> push_of(const redisReply* r) {
    const auto text = [](const redisReply* e) { return e->str != nullptr; };
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 || !text(r->element[0]) || !text(r->element[1]))
        return std::nullopt;
    push_message out{std::string(r->element[0]->str, r->element[0]->len),
                     std::string(r->element[1]->str, r->element[1]->len), {}};
    if (out.kind == "message" && r->elements >= 3 && text(r->element[2]))
        out.payload.assign(r->element[2]->str, r->element[2]->len);
    return out;
}

} // namespace zklock::detail::redis
