// The Lua scripts of the Redis and Redlock lock recipe. KEYS[1] is the lock's
// key; KEYS[2] is its fencing counter (acquire, raise) or its release channel
// (release, extend). Each runs atomically on one server.
#pragma once

namespace zklock::detail::redis {

// SET NX PX and, when set, INCR the fencing counter: the token (> 0), or 0 when taken.
inline constexpr const char* acquire_script =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('incr', KEYS[2]) end "
    "return 0";
// Compare-and-delete; publishes the released token on the release channel when
// ARGV[2] is '1' (so a Redlock waiter counts one release once, whatever the masters).
inline constexpr const char* release_script =
    "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) "
    "if ARGV[2] == '1' then redis.call('publish', KEYS[2], ARGV[1]) end return 1 end return 0";
// Compare-and-PEXPIRE: 1 when renewed, 0 when the key is no longer ours.
inline constexpr const char* extend_script =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
// Redlock: raise a master's fencing counter (KEYS[2]) to at least ARGV[1].
inline constexpr const char* raise_script =
    "local c = tonumber(redis.call('get', KEYS[2]) or '0') "
    "if c < tonumber(ARGV[1]) then redis.call('set', KEYS[2], ARGV[1]) end return 1";

} // namespace zklock::detail::redis
