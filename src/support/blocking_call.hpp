// The blocking form of an asynchronous operation: start it, then wait on the
// calling thread for its completion. Refused on the thread that would run the
// completion, which would wait for itself.
#pragma once

#include <zklock/error.hpp>

#include <future>
#include <system_error>
#include <tuple>
#include <utility>

namespace zklock::detail {

/// Calls `start(done)` and waits until `done(ec, r...)` is called; returns
/// what it was called with. errc::would_deadlock, and nothing started, when
/// `on_own_thread` (the caller is the thread that would call `done`).
template <class... R, class Start>
std::tuple<std::error_code, R...> wait_for_completion(bool on_own_thread, Start&& start) {
    if (on_own_thread) return {make_error_code(errc::would_deadlock), R{}...};
    std::promise<std::tuple<std::error_code, R...>> p;
    auto f = p.get_future();
    std::forward<Start>(start)([&p](std::error_code ec, R... r) { p.set_value({ec, std::move(r)...}); });
    return f.get();
}

} // namespace zklock::detail
