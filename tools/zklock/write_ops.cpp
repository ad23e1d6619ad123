#include "write_ops.hpp"

#include "arguments.hpp"

#include <cstdint>
#include <optional>

namespace zklock::cli {
namespace {

struct verb {
    const char* name;
    guarded_op::kind kind;
    bool takes_data;
    bool takes_version;
};

constexpr verb verbs[] = {
    {"create", guarded_op::kind::create, true, false},  {"sequential", guarded_op::kind::sequential, true, false},
    {"set", guarded_op::kind::set_data, true, true},    {"delete", guarded_op::kind::erase, false, true},
    {"check", guarded_op::kind::check, false, true},
};

std::optional<std::int32_t> version_of(const std::string& text) { return whole_number<std::int32_t>(text); }

} // namespace

write_ops parse_write_ops(const std::vector<std::string>& words, const std::function<std::string()>& read_stdin) {
    write_ops out;
    bool stdin_used = false;
    for (std::size_t i = 0; i < words.size();) {
        const std::string& word = words[i];
        const auto colon = word.find(':');
        const std::string name = word.substr(0, colon);
        const verb* v = nullptr;
        for (const auto& candidate : verbs)
            if (name == candidate.name) v = &candidate;
        if (!v) {
            out.error = "'" + word + "' is no operation (create, sequential, set, delete, check)";
            return out;
        }
        guarded_op op;
        op.type = v->kind;
        if (colon != std::string::npos) {
            const auto version = v->takes_version ? version_of(word.substr(colon + 1)) : std::nullopt;
            if (!version) {
                out.error = v->takes_version ? "'" + word + "': the version after ':' must be a number from 0"
                                             : "'" + word + "': " + v->name + " takes no version";
                return out;
            }
            op.version = *version;
        }
        const std::size_t needed = v->takes_data ? 2 : 1;
        if (i + needed >= words.size()) {
            out.error = std::string(v->name) + " needs " + (v->takes_data ? "PATH DATA" : "PATH");
            return out;
        }
        op.path = words[i + 1];
        if (v->takes_data) {
            op.data = words[i + 2];
            if (op.data == "-") {
                if (stdin_used) {
                    out.error = "only one DATA can be read from stdin ('-')";
                    return out;
                }
                stdin_used = true;
                op.data = read_stdin();
            }
        }
        out.ops.push_back(std::move(op));
        i += needed + 1;
    }
    if (out.ops.empty()) out.error = "no operation given";
    return out;
}

std::vector<std::string> lock_nodes_of(const std::string& value) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= value.size()) {
        const auto nl = value.find('\n', start);
        std::string line = value.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) out.push_back(std::move(line));
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    return out;
}

} // namespace zklock::cli
