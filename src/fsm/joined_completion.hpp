// One completion for several answers: an attempt's delete that goes to several
// directories (delete_by_guid in each of a lock set's) completes once, when
// the last answers, with the first error among them.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <system_error>
#include <utility>

namespace zklock::detail {

/// A function to call `count` times (once per answer); the last call calls
/// `done` with the first error passed, or none. `count` 1 returns `done`.
inline std::function<void(std::error_code)> joined_completion(std::size_t count,
                                                              std::function<void(std::error_code)> done) {
    if (count <= 1 || !done) return done;
    struct state {
        std::size_t left;
        std::error_code first;
        std::function<void(std::error_code)> done;
    };
    auto s = std::make_shared<state>(state{count, {}, std::move(done)});
    return [s](std::error_code ec) {
        if (ec && !s->first) s->first = ec;
        if (s->left == 0 || --s->left > 0) return;
        if (auto d = std::exchange(s->done, nullptr)) d(s->first);
    };
}

} // namespace zklock::detail
