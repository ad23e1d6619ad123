#include <zklock/lock_events.hpp>

#include <sstream>

namespace zklock {

const char* to_string(lock_event_kind kind) noexcept {
    switch (kind) {
    case lock_event_kind::queued: return "queued";
    case lock_event_kind::moved: return "moved";
    case lock_event_kind::granted: return "granted";
    case lock_event_kind::released: return "released";
    case lock_event_kind::lost: return "lost";
    case lock_event_kind::left: return "left";
    case lock_event_kind::revocation_requested: return "revocation_requested";
    }
    return "unknown";
}

void lock_metrics::record(const lock_event& e) {
    std::lock_guard lk(m_);
    auto& p = paths_[e.path];
    const auto seconds = [](std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); };
    switch (e.kind) {
    case lock_event_kind::queued: ++p.waiting; break;
    case lock_event_kind::moved: break;
    case lock_event_kind::left:
        if (p.waiting > 0) --p.waiting;
        break;
    case lock_event_kind::granted:
        if (p.waiting > 0) --p.waiting;
        ++p.held;
        ++p.acquisitions;
        p.wait_s += seconds(e.waited);
        break;
    case lock_event_kind::released:
    case lock_event_kind::lost:
        if (p.held > 0) --p.held;
        p.hold_s += seconds(e.held);
        if (e.kind == lock_event_kind::lost) ++p.losses;
        break;
    case lock_event_kind::revocation_requested: ++p.revocation_requests; break;
    }
}

namespace {

/// A label value with \, " and newline escaped, as the text format wants.
std::string label(const std::string& v) {
    std::string out;
    for (const char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

} // namespace

std::string lock_metrics::prometheus_text() const {
    std::lock_guard lk(m_);
    std::ostringstream out;
    out.precision(12);
    const auto family = [&](const char* name, const char* type, const char* help, auto value) {
        out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
        for (const auto& [path, p] : paths_) out << name << "{path=\"" << label(path) << "\"} " << value(p) << '\n';
    };
    family("zklock_lock_acquisitions_total", "counter", "Acquisitions granted.",
           [](const per_path& p) { return p.acquisitions; });
    family("zklock_lock_wait_seconds_total", "counter", "Time from acquire to grant, summed over the grants.",
           [](const per_path& p) { return p.wait_s; });
    family("zklock_lock_hold_seconds_total", "counter", "Time held, summed over the holds that ended.",
           [](const per_path& p) { return p.hold_s; });
    family("zklock_lock_losses_total", "counter", "Holds that ended without an unlock.",
           [](const per_path& p) { return p.losses; });
    family("zklock_lock_revocation_requests_total", "counter",
           "Revocation requests that arrived while held (honoured or not).",
           [](const per_path& p) { return p.revocation_requests; });
    family("zklock_lock_waiting", "gauge", "Acquires in the queue, not yet granted.",
           [](const per_path& p) { return p.waiting; });
    family("zklock_lock_held", "gauge", "Holds in progress.", [](const per_path& p) { return p.held; });
    return out.str();
}

} // namespace zklock
