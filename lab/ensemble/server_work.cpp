#include "ensemble/server_work.hpp"

#include "ensemble/servers.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>

namespace zklock::cli {
namespace {

// The value after `key` and a tab at the start of a line of mntr's answer.
std::optional<std::int64_t> mntr_value(std::string_view mntr, std::string_view key) {
    for (std::size_t at = 0; at < mntr.size();) {
        const auto end = std::min(mntr.find('\n', at), mntr.size());
        const auto line = mntr.substr(at, end - at);
        at = end + 1;
        if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != '\t') continue;
        const auto text = line.substr(key.size() + 1);
        std::int64_t v = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || (p != text.data() + text.size() && *p != '\r')) return std::nullopt;
        return v;
    }
    return std::nullopt;
}

// srvr's "Zxid: 0x..." line.
std::optional<std::int64_t> srvr_zxid(std::string_view srvr) {
    constexpr std::string_view key = "Zxid: 0x";
    const auto at = srvr.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    const auto text = srvr.substr(at + key.size());
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
    if (ec != std::errc() || p == text.data()) return std::nullopt;
    return static_cast<std::int64_t>(v);
}

constexpr std::int64_t epoch_of(std::int64_t zxid) { return zxid >> 32; }

double per(std::int64_t n, std::int64_t d) { return static_cast<double>(n) / static_cast<double>(d); }

} // namespace

std::optional<server_counters> parse_server_counters(std::string_view mntr, std::string_view srvr) {
    const auto requests = mntr_value(mntr, "zk_packets_received");
    const auto fsyncs = mntr_value(mntr, "zk_cnt_fsynctime");
    const auto zxid = srvr_zxid(srvr);
    if (!requests || !fsyncs || !zxid) return std::nullopt;
    return server_counters{*requests, *fsyncs, *zxid};
}

std::optional<server_counters> read_server_counters(const std::string& server, std::chrono::milliseconds timeout) {
    const auto address = server.substr(0, server.find('/'));
    std::string why;
    const auto mntr = ask_word(address, "mntr", timeout, why);
    if (!mntr) return std::nullopt;
    const auto srvr = ask_word(address, "srvr", timeout, why);
    if (!srvr) return std::nullopt;
    return parse_server_counters(*mntr, *srvr);
}

nlohmann::json work_between(const server_counters& before, const server_counters& after,
                            const std::optional<server_counters>& leader_before,
                            const std::optional<server_counters>& leader_after) {
    const auto txns = after.zxid - before.zxid;
    if (txns <= 0 || epoch_of(after.zxid) != epoch_of(before.zxid)) return nullptr;
    nlohmann::json w = {{"transactions", txns},
                        {"requests_per_transaction", per(after.requests - before.requests, txns)}};
    const auto fsyncs = after.fsyncs - before.fsyncs;
    w["transactions_per_fsync"] = fsyncs > 0 ? nlohmann::json(per(txns, fsyncs)) : nlohmann::json();
    if (leader_before && leader_after) {
        const auto leader_fsyncs = leader_after->fsyncs - leader_before->fsyncs;
        w["leader_transactions_per_fsync"] =
            leader_fsyncs > 0 ? nlohmann::json(per(txns, leader_fsyncs)) : nlohmann::json();
    }
    return w;
}

nlohmann::json measured_work(const std::optional<server_counters>& before, const std::optional<server_counters>& after,
                             std::size_t turns) {
    nlohmann::json w = {{"measured_transactions", nullptr}, {"transactions_per_turn", nullptr}};
    if (!before || !after || epoch_of(after->zxid) != epoch_of(before->zxid)) return w;
    const auto txns = after->zxid - before->zxid;
    w["measured_transactions"] = txns;
    if (turns > 0) w["transactions_per_turn"] = per(txns, static_cast<std::int64_t>(turns));
    return w;
}

void add_transactions_per_turn(nlohmann::json& row) {
    const auto txns = row.value("measured_transactions", nlohmann::json());
    const auto turns = row.value("ops", nlohmann::json());
    row["transactions_per_turn"] = txns.is_number() && turns.is_number() && turns.get<double>() > 0
                                       ? nlohmann::json(txns.get<double>() / turns.get<double>())
                                       : nlohmann::json();
}

} // namespace zklock::cli
