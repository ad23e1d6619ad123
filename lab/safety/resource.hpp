// zklock bench --safety: the guarded resource of one run. It listens on a
// Unix socket for the client processes (safety/protocol.hpp), records
// their critical sections and writes in a SafetyLedger (a fenced and an
// unfenced copy of the resource), and lets the bench stage the fault: it holds
// back the answer of the first holder to reach the trigger until the bench
// has done what the fault does.
//
// One thread of its own answers the clients (poll(2) on the sockets, an
// eventfd to stop it, and the bench's signalfd: a stop signal sets
// `interrupted` and wakes every wait). Every descriptor is close-on-exec.
// The other members are for the bench's thread; each may be called from any
// thread.
#pragma once

#include "safety/plan.hpp"
#include "safety/protocol.hpp"
#include "safety/tally.hpp"

#include "safety/safety_ledger.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace zklock::cli::safety {

class safety_resource {
public:
    /// Listens on `socket_path` (its directory must be private); client i gets
    /// configs[i] at hello. `signal_fd`: a signalfd of the stop signals, or -1.
    /// The section the fault hits goes on at least `settle` after the fault began.
    safety_resource(const std::filesystem::path& socket_path, std::vector<nlohmann::json> configs,
                    int writes_per_section, trigger at, clock_type::duration settle, int signal_fd,
                    std::atomic<bool>& interrupted);
    /// Stops the thread and closes every socket (clients then see the end of file).
    ~safety_resource();
    safety_resource(const safety_resource&) = delete;
    safety_resource& operator=(const safety_resource&) = delete;

    /// Waits until `n` grants have been entered at or after `after`; false at
    /// the deadline or when interrupted.
    bool wait_grants(std::size_t n, clock_type::time_point after, clock_type::time_point deadline);
    /// Waits until the deadline (the fault's duration); false when interrupted first.
    bool wait_until(clock_type::time_point deadline);

    /// The next holder to reach the trigger has its answer held back.
    void arm();
    /// Waits for that holder; its client index, or nullopt at the deadline or
    /// when interrupted.
    std::optional<int> wait_trigger(clock_type::time_point deadline);
    void fault_started();
    /// Sends the held-back answer (go): the holder goes on when it can.
    void release_held_back();
    void fault_ended();
    /// The bench is about to kill `client`'s process (held back: it writes
    /// nothing meanwhile): its open section ends now.
    void client_killed(int client);
    /// The run is over: sections end, clients stop when they next ask.
    void stop_run();

    lab::safety_summary summary() const;
    grant_order_judge writes() const;
    std::vector<section_record> sections() const;
    /// What clients reported failing, and anything unexpected, with counts.
    std::vector<std::string> notes() const;

private:
    struct client_state;
    void serve();
    void accept_clients();
    void read_client(int fd);
    std::optional<std::string> handle(client_state& c, const std::string& line);
    void close_client(int fd);
    void note(const std::string& what);
    void send_line(int fd, const std::string& line);

    std::vector<nlohmann::json> configs_;
    const int writes_per_section_;
    const trigger trigger_;
    const clock_type::duration settle_;
    const int signal_fd_;
    std::atomic<bool>& interrupted_;
    int listen_fd_ = -1;
    int wake_fd_ = -1;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::map<int, std::unique_ptr<client_state>> clients_;  // by descriptor
    lab::SafetyLedger ledger_;
    grant_order_judge judge_;
    clock_type::time_point fault_start_;
    std::vector<section_record> sections_;
    std::vector<std::uint64_t> section_ids_;  // the ledger's id of each section
    run_phase phase_;
    std::optional<int> held_back_fd_;
    std::optional<int> triggered_client_;
    std::optional<std::size_t> faulted_section_;
    bool wrote_after_fault_ = false;
    std::map<std::string, int> notes_;
    std::thread thread_;
};

}  // namespace zklock::cli::safety
