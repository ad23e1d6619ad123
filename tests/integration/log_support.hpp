// The records a log_sink received, copied (a record's views live only during
// the callback), for the tests of the Session's and the backends' logs.
#pragma once

#include <zklock/log.hpp>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace zklock::test {

struct collected_log {
    struct record {
        log_level level;
        std::string source, message;
        std::int64_t session_id;
    };

    /// A sink that keeps every record up to `level`.
    log_sink sink(log_level level) {
        return log_sink{level, [this](const log_record& r) {
                            std::lock_guard lk(m_);
                            records_.push_back({r.level, std::string(r.source), std::string(r.message), r.session_id});
                        }};
    }
    std::vector<record> all() const {
        std::lock_guard lk(m_);
        return records_;
    }
    /// A record of `source` whose message contains `text`.
    bool has(const std::string& source, const std::string& text) const {
        for (const auto& r : all())
            if (r.source == source && r.message.find(text) != std::string::npos) return true;
        return false;
    }
    /// The same, at exactly `level`.
    bool has_at(log_level level, const std::string& source, const std::string& text) const {
        for (const auto& r : all())
            if (r.level == level && r.source == source && r.message.find(text) != std::string::npos) return true;
        return false;
    }
    /// Some record's message contains `text` (e.g. a secret that must not be there).
    bool mentions(const std::string& text) const {
        for (const auto& r : all())
            if (r.message.find(text) != std::string::npos) return true;
        return false;
    }

private:
    mutable std::mutex m_;
    std::vector<record> records_;
};

} // namespace zklock::test
