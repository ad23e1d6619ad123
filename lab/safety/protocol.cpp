#include "safety/protocol.hpp"

#include <array>
#include <charconv>
#include <utility>

namespace zklock::cli::safety {
namespace {

constexpr std::array<std::pair<request_kind, std::string_view>, 9> words = {{{request_kind::hello, "hello"},
                                                                             {request_kind::next, "next"},
                                                                             {request_kind::between, "between"},
                                                                             {request_kind::failed, "failed"},
                                                                             {request_kind::enter, "enter"},
                                                                             {request_kind::ready, "ready"},
                                                                             {request_kind::write, "write"},
                                                                             {request_kind::leave, "leave"},
                                                                             {request_kind::released, "released"}}};

std::string one_line(std::string_view text) {
    std::string out(text);
    for (auto& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    return out;
}

bool numbered(request_kind k) { return k == request_kind::hello || k == request_kind::enter || k == request_kind::ready; }
bool worded(request_kind k) {
    return k == request_kind::failed || k == request_kind::leave || k == request_kind::released;
}

}  // namespace

std::string format(const request& r) {
    std::string line;
    for (const auto& [kind, word] : words)
        if (kind == r.kind) line = word;
    if (numbered(r.kind)) line += " " + std::to_string(r.number);
    if (r.kind == request_kind::failed) line += " " + one_line(r.text);
    if (r.kind == request_kind::leave) line += " " + (r.text.empty() ? std::string("-") : one_line(r.text));
    if (r.kind == request_kind::released) line += " " + (r.text.empty() ? std::string("ok") : one_line(r.text));
    return line;
}

std::optional<request> parse_request(std::string_view line) {
    const auto space = line.find(' ');
    const auto word = line.substr(0, space);
    const auto rest = space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
    for (const auto& [kind, w] : words) {
        if (w != word) continue;
        request r;
        r.kind = kind;
        if (numbered(kind)) {
            const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), r.number);
            if (rest.empty() || ec != std::errc{} || end != rest.data() + rest.size()) return std::nullopt;
        } else if (worded(kind)) {
            if (rest.empty()) return std::nullopt;
            r.text = std::string(rest);
            if ((kind == request_kind::leave && rest == "-") || (kind == request_kind::released && rest == "ok"))
                r.text.clear();
        } else if (space != std::string_view::npos) {
            return std::nullopt;
        }
        return r;
    }
    return std::nullopt;
}

answer answer_ready(std::int64_t n, int writes_per_section, bool trigger_at_second_write, const run_phase& phase,
                    const faulted_section& section) {
    if (section.is_faulted) return phase.fault_settled && section.wrote_after_fault ? answer::end : answer::go;
    if (phase.stopping) return answer::end;
    if (phase.fault_armed && trigger_at_second_write && n == 2) return answer::hold_back;
    return n <= writes_per_section ? answer::go : answer::end;
}

answer answer_next(const run_phase& phase) { return phase.stopping ? answer::end : answer::go; }

}  // namespace zklock::cli::safety
