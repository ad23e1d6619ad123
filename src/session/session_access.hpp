// How zklock's own code reaches a Session's internals (the session state the
// engines, the recipes and the testing seam work on): Session names this as
// its friend instead of handing its internals to every user.
#pragma once

#include <zklock/session.hpp>

#include <memory>

namespace zklock::detail {

class session_impl;

struct session_access {
    static const std::shared_ptr<session_impl>& session(const Session& s) noexcept { return s.impl_; }
};

} // namespace zklock::detail
