#include "chaos/chaos.hpp"

#include <zklock/error.hpp>
#include <zklock/leader_election.hpp>
#include <zklock/mutex.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/diagnostics.hpp>
#include <zklock/testing/packet_filter.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <future>
#include <sstream>
#include <stdexcept>

namespace zklock::lab {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

using clock = std::chrono::steady_clock;

// A draw in [0, n) by modulo: the same for a seed with every standard library
// (std's distributions are not specified bit for bit).
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t n) { return n == 0 ? 0 : rng() % n; }

std::chrono::milliseconds draw_between(std::mt19937_64& rng, std::chrono::milliseconds lo, std::chrono::milliseconds hi) {
    if (hi <= lo) return lo;
    return lo + std::chrono::milliseconds(draw(rng, static_cast<std::uint64_t>((hi - lo).count()) + 1));
}

bool instant(chaos_fault f) {
    return f == chaos_fault::reset_client || f == chaos_fault::drop_create_reply || f == chaos_fault::expire_session ||
           f == chaos_fault::garble_create_reply;
}

bool needs_iptables(chaos_fault f) { return f == chaos_fault::blackhole_client || f == chaos_fault::partition_leader; }

bool needs_peers(chaos_fault f) { return f == chaos_fault::kill_follower || f == chaos_fault::partition_leader; }

bool client_fault(chaos_fault f) {
    switch (f) {
    case chaos_fault::blackhole_client:
    case chaos_fault::reset_client:
    case chaos_fault::drop_create_reply:
    case chaos_fault::delay_client:
    case chaos_fault::expire_session:
    case chaos_fault::freeze_holder:
    case chaos_fault::garble_create_reply: return true;
    default: return false;
    }
}

// Waits, as a fault lasts: the schedule's own time, not a synchronization.
void hold_for(std::chrono::milliseconds d) {
    if (d > 0ms) std::this_thread::sleep_for(d);  // allowed: the duration of a fault or a quiet time is what is under test
}

// Polls `pred` (every 5 ms) until it holds or `timeout` passes.
bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    while (!pred()) {
        if (clock::now() >= deadline) return pred();
        std::this_thread::sleep_for(5ms);  // allowed: polling interval of a deadline wait
    }
    return true;
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
    return out;
}

}  // namespace

// ---- seeds ----------------------------------------------------------------------

std::optional<std::uint64_t> parse_chaos_seed(std::string_view text) {
    if (text.empty() || text.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    for (const char c : text)
        if (c < '0' || c > '9') return std::nullopt;
    return v;
}

std::uint64_t chaos_seed() {
    if (const char* env = std::getenv(chaos_seed_variable); env && *env) {
        if (const auto s = parse_chaos_seed(env)) return *s;
        throw std::invalid_argument(std::string(chaos_seed_variable) + " is not a seed (decimal digits): '" + env + "'");
    }
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

std::string describe_seed(std::uint64_t seed) {
    return "chaos seed " + std::to_string(seed) + " (replay: " + chaos_seed_variable + "=" + std::to_string(seed) + ")";
}

// ---- schedules --------------------------------------------------------------------

std::string_view to_string(chaos_fault f) noexcept {
    switch (f) {
    case chaos_fault::kill_leader: return "kill_leader";
    case chaos_fault::kill_follower: return "kill_follower";
    case chaos_fault::pause_server: return "pause_server";
    case chaos_fault::partition_leader: return "partition_leader";
    case chaos_fault::blackhole_client: return "blackhole_client";
    case chaos_fault::reset_client: return "reset_client";
    case chaos_fault::drop_create_reply: return "drop_create_reply";
    case chaos_fault::delay_client: return "delay_client";
    case chaos_fault::expire_session: return "expire_session";
    case chaos_fault::freeze_holder: return "freeze_holder";
    case chaos_fault::garble_create_reply: return "garble_create_reply";
    }
    return "?";
}

std::vector<chaos_fault> all_chaos_faults() {
    return {chaos_fault::kill_leader,      chaos_fault::kill_follower,     chaos_fault::pause_server,
            chaos_fault::partition_leader, chaos_fault::blackhole_client,  chaos_fault::reset_client,
            chaos_fault::drop_create_reply, chaos_fault::delay_client,     chaos_fault::expire_session,
            chaos_fault::freeze_holder,    chaos_fault::garble_create_reply};
}

std::string describe(const chaos_step& step) {
    std::string out(to_string(step.fault));
    out += client_fault(step.fault) ? " client " : " node ";
    out += std::to_string(step.target);
    if (step.duration > 0ms) out += " for " + std::to_string(step.duration.count()) + " ms";
    out += ", then " + std::to_string(step.quiet.count()) + " ms quiet";
    return out;
}

chaos_schedule_options& chaos_schedule_options::without_iptables() {
    std::erase_if(faults, needs_iptables);
    return *this;
}

std::string lock_create_needle() { return std::string("-lock-\0\0\0", 9); }

chaos_step next_chaos_step(std::mt19937_64& rng, const chaos_schedule_options& o) {
    std::vector<chaos_fault> usable;
    for (const auto f : o.faults) {
        if (needs_peers(f) && o.nodes < 2) continue;
        if (client_fault(f) && o.clients == 0) continue;
        if (!client_fault(f) && o.nodes == 0) continue;
        usable.push_back(f);
    }
    if (usable.empty()) throw std::invalid_argument("chaos schedule: no fault fits the options");
    chaos_step s;
    s.fault = usable[draw(rng, usable.size())];
    s.target = draw(rng, client_fault(s.fault) ? o.clients : o.nodes);
    s.duration = instant(s.fault) ? 0ms : draw_between(rng, o.min_duration, o.max_duration);
    s.quiet = draw_between(rng, o.min_quiet, o.max_quiet);
    return s;
}

std::vector<chaos_step> chaos_schedule(std::uint64_t seed, const chaos_schedule_options& options, std::size_t count) {
    std::mt19937_64 rng(seed);
    std::vector<chaos_step> out;
    for (std::size_t i = 0; i < count; ++i) out.push_back(next_chaos_step(rng, options));
    return out;
}

// ---- verdicts ---------------------------------------------------------------------

std::vector<std::string> chaos_violations(const chaos_outcome& o) {
    std::vector<std::string> v;
    const auto& s = o.summary;
    auto count = [&](std::uint64_t n, const std::string& what) {
        if (n > 0) v.push_back(std::to_string(n) + " " + what);
    };
    count(s.duplicate_tokens, "accepted write(s) carried a token another holder had written with (two grants, one token)");
    count(s.out_of_order_accepts, "write(s) accepted with a token lower than one accepted before");
    count(s.interleaved_accepts, "accepted write(s) of a holder after a newer holder's accepted write");
    count(s.unexplained_overlaps,
          "overlap(s) of critical sections that no loss report explains (two holders at once, neither told)");
    count(s.open_sections, "critical section(s) never ended");
    count(s.overlaps_inside_budget,
          "critical section(s) entered while another holder's safe-time budget was still positive");
    if (o.leftovers > 0)
        v.push_back(std::to_string(o.leftovers) + " lock node(s) left after every client released: " +
                    join(o.leftover_nodes));
    if (!o.hung.empty()) v.push_back("client(s) hung past a deadline: " + join(o.hung));
    if (!o.stalled.empty()) v.push_back("client(s) that did not get the lock again after the last fault: " + join(o.stalled));
    if (!o.failed_acquires.empty()) v.push_back("acquires failed: " + join(o.failed_acquires));
    if (!o.wrong_losses.empty()) v.push_back("losses with a reason no fault of the run causes: " + join(o.wrong_losses));
    return v;
}

std::string chaos_line(const chaos_outcome& o) {
    const auto& s = o.summary;
    std::ostringstream out;
    out << "faults=" << o.faults << " grants=" << s.grants << " accepted=" << s.accepted << " refused=" << s.refused
        << " overlaps=" << s.overlaps << " unexplained_overlaps=" << s.unexplained_overlaps << " lost=" << s.lost
        << " stale_unfenced=" << s.stale_accepted_unfenced << " duplicate_tokens=" << s.duplicate_tokens
        << " longest_gap_ms=" << s.longest_gap.count() << " leftovers=" << o.leftovers << " hung=" << o.hung.size()
        << " stalled=" << o.stalled.size() << " budgeted=" << s.budgeted << " inside_budget=" << s.overlaps_inside_budget;
    return out.str();
}

// ---- clients ------------------------------------------------------------------------

std::string_view to_string(chaos_recipe r) noexcept {
    switch (r) {
    case chaos_recipe::mutex: return "mutex";
    case chaos_recipe::leader_election: return "leader_election";
    case chaos_recipe::semaphore: return "semaphore";
    }
    return "?";
}

namespace {

// The outcome of one asynchronous call, waited on with a deadline. The state is
// shared with the handler, so a call abandoned at its deadline (a hung client)
// completes into nothing.
template <class T> struct pending {
    std::shared_ptr<std::promise<T>> promise = std::make_shared<std::promise<T>>();
    std::future<T> future = promise->get_future();
};

}  // namespace

ChaosClient::ChaosClient(std::string name, SessionOptions session, ChaosClientOptions options, SafetyLedger& ledger,
                         std::uint64_t seed)
    : name_(std::move(name)), options_(std::move(options)), ledger_(ledger), rng_(seed) {
    if (options_.writes < 2) options_.writes = 2;
    session_ = std::make_unique<Session>(std::move(session));
    session_->connect();
}

ChaosClient::~ChaosClient() {
    stop(options_.acquire_timeout + options_.release_timeout);
    if (worker_.joinable()) {
        // Hung for good: closing the session completes whatever it waits for.
        session_->close();
        worker_.join();
    }
    session_.reset();
}

void ChaosClient::start() {
    if (worker_.joinable()) return;
    worker_ = std::thread([this] { run(); });
}

void ChaosClient::request_stop() {
    thaw();
    {
        std::lock_guard lk(m_);
        stopping_ = true;
    }
    cv_.notify_all();
}

bool ChaosClient::stop(std::chrono::milliseconds timeout) {
    request_stop();
    if (!worker_.joinable()) return true;
    std::unique_lock lk(m_);
    const bool finished = cv_.wait_for(lk, timeout, [&] { return done_.load(); });
    lk.unlock();
    if (!finished) {
        set_hung(hung_in().empty() ? "stopping" : hung_in());
        return false;
    }
    worker_.join();
    return true;
}

std::string ChaosClient::hung_in() const {
    std::lock_guard lk(m_);
    return hung_in_;
}

std::map<std::string, std::uint64_t> ChaosClient::losses() const {
    std::lock_guard lk(m_);
    return losses_;
}

std::map<std::string, std::uint64_t> ChaosClient::failed_acquires() const {
    std::lock_guard lk(m_);
    return failures_;
}

void ChaosClient::count_loss(const std::string& reason) {
    std::lock_guard lk(m_);
    ++losses_[reason];
    last_loss_ = loss_report{reason, clock::now()};
}

std::optional<ChaosClient::loss_report> ChaosClient::last_loss() const {
    std::lock_guard lk(m_);
    return last_loss_;
}

void ChaosClient::count_failure(const std::string& reason) {
    std::lock_guard lk(m_);
    ++failures_[reason];
}

void ChaosClient::set_hung(std::string where) {
    auto inside = hung_.load() ? std::string() : internals();
    std::lock_guard lk(m_);
    if (hung_in_.empty()) {
        hung_in_ = std::move(where);
        internals_at_hang_ = std::move(inside);
    }
    hung_ = true;
}

std::string ChaosClient::internals() const {
    std::string out = "session{" + describe_internals(*session_) + "}";
    std::lock_guard lk(mutex_m_);
    if (mutex_) out += " mutex{" + describe_internals(*mutex_) + "}";
    return out;
}

void ChaosClient::freeze(bool with_session) {
    std::unique_lock lk(m_);
    if (frozen_) return;
    frozen_ = true;
    gate_closed_ = true;
    // The worker first, at its next step (a library call it waits for needs the
    // session to complete), then the session: from then on it neither hears
    // nor answers the server.
    if (worker_.joinable())
        cv_.wait_for(lk, options_.acquire_timeout + options_.hang_margin, [&] { return worker_held_ || done_; });
    if (!with_session) return;
    lk.unlock();
    std::unique_ptr<SessionFreeze> f;
    try {
        f = std::make_unique<SessionFreeze>(*session_);
    } catch (const zklock::error&) {
        // A closed session: only the worker is frozen.
    }
    lk.lock();
    session_freeze_ = std::move(f);
}

bool ChaosClient::worker_frozen(bool* in_section) const {
    std::lock_guard lk(m_);
    // Only a worker held at its gate is anywhere: one that stopped (hung, done)
    // is in no section, whatever its last gate said.
    if (in_section) *in_section = worker_held_ && held_in_section_;
    return worker_held_;
}

void ChaosClient::expire_frozen() {
    std::lock_guard lk(m_);
    if (session_freeze_) {
        ledger_.forced_end(name_, session_->session_id());  // outside the budget's rule
        session_freeze_->expire();
    }
}

void ChaosClient::thaw() {
    std::unique_lock lk(m_);
    if (!frozen_) return;
    // The worker first: a holder's next step is a write it believes covered by
    // the lock (its session has not yet read what happened meanwhile). Then the session.
    const bool late_write = worker_held_ && held_in_section_;
    const auto steps = steps_;
    gate_closed_ = false;
    cv_.notify_all();
    // Until it has left the gate (a freeze right after this one must not find
    // it still there), and for a holder until it has written.
    cv_.wait_for(lk, 5s, [&] { return !worker_held_ || done_; });
    if (late_write) cv_.wait_for(lk, 5s, [&] { return steps_ > steps || done_; });
    auto f = std::move(session_freeze_);
    frozen_ = false;
    lk.unlock();
    f.reset();  // thaws the session
}

void ChaosClient::around_next_release(std::function<void()> before, std::function<void()> after) {
    std::lock_guard lk(m_);
    before_release_ = std::move(before);
    after_release_ = std::move(after);
}

void ChaosClient::around_next_acquire(std::function<void()> before, std::function<void()> after) {
    std::lock_guard lk(m_);
    before_acquire_ = std::move(before);
    after_acquire_ = std::move(after);
}

void ChaosClient::between_hooks(bool release, const std::function<void()>& request) {
    std::function<void()> before, after;
    {
        std::lock_guard lk(m_);
        before = std::exchange(release ? before_release_ : before_acquire_, nullptr);
        after = std::exchange(release ? after_release_ : after_acquire_, nullptr);
    }
    if (before) before();
    request();
    if (after) after();
}

bool ChaosClient::retry_after_failure(std::error_code ec) {
    count_failure(ec.message());
    if (ec == errc::session_closed) return false;
    backoff();
    return true;
}

std::string ChaosClient::describe_state() const {
    std::ostringstream out;
    out << name_ << ": grants=" << grants_.load() << " in_section=" << (in_section_.load() ? "yes" : "no")
        << " token=" << token_.load() << " position=" << position_.load()
        << " session=" << to_string(session_->state()) << " frozen=" << (frozen_.load() ? "yes" : "no");
    // A frozen session's strand is held: its internals would only say so.
    if (!frozen_.load() && !hung_.load()) out << " internals: " << internals();
    std::lock_guard lk(m_);
    out << " gate=" << (gate_closed_ ? "closed" : "open") << " worker_held=" << (worker_held_ ? "yes" : "no")
        << " steps=" << steps_ << " done=" << (done_.load() ? "yes" : "no");
    if (hung_.load()) out << " hung_in=" << hung_in_ << " internals_at_hang: " << internals_at_hang_;
    return out.str();
}

bool ChaosClient::step(bool in_section) {
    std::unique_lock lk(m_);
    ++steps_;
    cv_.notify_all();
    if (gate_closed_ && !stopping_) {
        worker_held_ = true;
        held_in_section_ = in_section;
        cv_.notify_all();
        cv_.wait(lk, [&] { return !gate_closed_ || stopping_; });
        worker_held_ = false;
        cv_.notify_all();
    }
    return !stopping_;
}

void ChaosClient::acted() {
    {
        std::lock_guard lk(m_);
        ++steps_;
    }
    cv_.notify_all();
}

void ChaosClient::hold_a_little() {
    const auto ms = options_.max_hold.count() > 0 ? rng_() % static_cast<std::uint64_t>(options_.max_hold.count() + 1) : 0;
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));  // allowed: the critical section's work
}

void ChaosClient::backoff() {
    std::this_thread::sleep_for(50ms);  // allowed: a failed acquire is not retried in a tight loop
}

void ChaosClient::run() {
    try {
        switch (options_.recipe) {
        case chaos_recipe::mutex: run_mutex(); break;
        case chaos_recipe::leader_election: run_election(); break;
        case chaos_recipe::semaphore: run_semaphore(); break;
        }
    } catch (const std::exception& e) {
        count_failure(std::string("worker stopped: ") + e.what());
    }
    {
        std::lock_guard lk(m_);
        done_ = true;
    }
    cv_.notify_all();
}

namespace {

// Waits for an acquire whose cancellation slot `cancel` holds; at `timeout`
// cancels it where it runs (the session's executor) and waits `margin` more.
// False when it never completed.
template <class T>
bool wait_or_cancel(pending<T>& p, Session& session, const std::shared_ptr<asio::cancellation_signal>& cancel,
                    std::chrono::milliseconds timeout, std::chrono::milliseconds margin) {
    if (p.future.wait_for(timeout) == std::future_status::ready) return true;
    asio::post(session.get_executor(), [cancel] { cancel->emit(asio::cancellation_type::terminal); });
    return p.future.wait_for(margin) == std::future_status::ready;
}

}  // namespace

void ChaosClient::watch_losses(std::error_code ec) {
    ++lost_reports_;
    count_loss(ec == errc::node_deleted ? "node_deleted" : ec.message());
}

ChaosClient::section ChaosClient::hold_section(std::int64_t token, const std::function<bool()>& still_held,
                                               bool write,
                                               const std::function<std::optional<std::chrono::milliseconds>()>& safe_for) {
    const auto reports = lost_reports_.load();
    section r;
    r.id = ledger_.enter(name_, token);
    ledger_.held_on(r.id, session_->session_id());
    // The instant the budget says the hold is safe until: read first, then
    // the clock (never earlier than the budget's own now). A budget of zero
    // claims nothing (its end is already past, at an instant not known here).
    const auto note_budget = [&] {
        const auto left = safe_for();
        if (left && left->count() > 0)
            ledger_.budget(r.id, std::chrono::steady_clock::now() + *left, session_->session_id());
    };
    note_budget();
    token_ = token;
    in_section_ = true;
    ++grants_;
    for (std::size_t k = 0; k < options_.writes; ++k) {
        if (!step(true)) break;
        if (!still_held() || lost_reports_.load() != reports) {
            r.lost = true;
            break;
        }
        note_budget();
        if (write) {
            ledger_.write(r.id);
            acted();
        }
        hold_a_little();
    }
    if (r.lost) ledger_.lost(r.id);
    else ledger_.leave(r.id);
    in_section_ = false;
    acted();
    return r;
}

bool ChaosClient::release_section(std::optional<section> held, std::string_view what,
                                  const std::function<void(std::function<void(std::error_code)>)>& release) {
    pending<std::error_code> released;
    between_hooks(true, [&] { release([p = released.promise](std::error_code e) { p->set_value(e); }); });
    if (released.future.wait_for(options_.release_timeout) != std::future_status::ready) {
        set_hung(std::string(what));
        return false;
    }
    if (const auto ec = released.future.get(); ec && held && !held->lost) {
        ledger_.lost(held->id);  // the release found the lock gone: it was lost during the section
        count_loss("release: " + ec.message());
    }
    return true;
}

// The three loops share their shape: acquire with a deadline (cancelled at
// stop), enter, write while still holding, leave, release and learn whether
// the lock was still ours.
void ChaosClient::run_mutex() {
    Mutex m(*session_, options_.path);  // releases marked: the handoff without a listing is what the faults hit
    {
        std::lock_guard lk(mutex_m_);
        mutex_ = &m;
    }
    struct forget {
        ChaosClient& c;
        ~forget() {
            std::lock_guard lk(c.mutex_m_);
            c.mutex_ = nullptr;
        }
    } forget_mutex{*this};
    m.on_queue_position([this](std::size_t p) { position_ = static_cast<std::int64_t>(p); });
    m.on_lost([this](std::error_code ec) { watch_losses(ec); });
    while (step(false)) {
        pending<std::pair<std::error_code, bool>> acquired;
        between_hooks(false, [&] {
            m.async_try_lock_for(options_.acquire_timeout, [p = acquired.promise](std::error_code ec, bool ok) {
                p->set_value({ec, ok});
            });
        });
        if (acquired.future.wait_for(options_.acquire_timeout + options_.hang_margin) != std::future_status::ready)
            return set_hung("acquire (async_try_lock_for)");
        const auto [ec, ok] = acquired.future.get();
        if (ec) {
            if (!retry_after_failure(ec)) return;
            continue;
        }
        if (!ok) continue;

        std::optional<section> held;
        if (const auto token = m.fencing_token(); token != 0)  // 0: lost before it could be read
            held = hold_section(token, [&m] { return m.is_held(); }, true, [&m] { return m.safe_for(); });
        if (!release_section(held, "release (async_unlock)", [&m](auto done) { m.async_unlock(std::move(done)); }))
            return;
    }
}

void ChaosClient::run_election() {
    LeaderElection e(*session_, options_.path, name_);
    e.on_queue_position([this](std::size_t p) { position_ = static_cast<std::int64_t>(p); });
    e.on_lost([this](std::error_code ec) { watch_losses(ec); });
    while (step(false)) {
        auto cancel = std::make_shared<asio::cancellation_signal>();
        pending<std::pair<std::error_code, Leadership>> won;
        between_hooks(false, [&] {
            e.async_campaign(asio::bind_cancellation_slot(
                cancel->slot(), [p = won.promise](std::error_code ec, Leadership l) { p->set_value({ec, std::move(l)}); }));
        });
        if (!wait_or_cancel(won, *session_, cancel, options_.acquire_timeout, options_.hang_margin))
            return set_hung("campaign (cancelled at its deadline)");
        const auto [ec, term] = won.future.get();
        if (ec == std::errc::operation_canceled) continue;
        if (ec) {
            if (!retry_after_failure(ec)) return;
            continue;
        }

        const auto held =
            hold_section(term.epoch, [&e] { return e.is_leader(); }, true, [&e] { return e.safe_for(); });
        // async_resign says whether the term was still ours.
        if (!release_section(held, "resign (async_resign)", [&e](auto done) { e.async_resign(std::move(done)); }))
            return;
    }
}

void ChaosClient::run_semaphore() {
    Semaphore sem(*session_, options_.path, options_.permits);
    auto permit = sem.permit();
    permit.on_queue_position([this](std::size_t p) { position_ = static_cast<std::int64_t>(p); });
    permit.on_lost([this](std::error_code ec) { watch_losses(ec); });
    while (step(false)) {
        auto cancel = std::make_shared<asio::cancellation_signal>();
        pending<std::error_code> granted;
        between_hooks(false, [&] {
            permit.async_lock(
                asio::bind_cancellation_slot(cancel->slot(), [p = granted.promise](std::error_code ec) { p->set_value(ec); }));
        });
        if (!wait_or_cancel(granted, *session_, cancel, options_.acquire_timeout, options_.hang_margin))
            return set_hung("permit acquire (cancelled at its deadline)");
        const auto ec = granted.future.get();
        if (ec == std::errc::operation_canceled) continue;
        if (ec) {
            if (!retry_after_failure(ec)) return;
            continue;
        }
        // A semaphore's holders share no fenced resource: no write.
        const auto held = hold_section(permit.fencing_token(), [&permit] { return permit.is_held(); }, false,
                                       [&permit] { return permit.safe_for(); });
        if (!release_section(held, "permit release (async_unlock)",
                             [&permit](auto done) { permit.async_unlock(std::move(done)); }))
            return;
    }
}

// ---- a whole run ------------------------------------------------------------------

ChaosCluster::ChaosCluster(ChaosOptions options, std::uint64_t seed)
    : options_(std::move(options)),
      rng_(seed),
      ledger_(options_.client.recipe == chaos_recipe::semaphore ? options_.client.permits : 1) {
    EnsembleOptions eo;
    eo.size = options_.nodes == 0 ? 1 : options_.nodes;
    eo.tick_time_ms = 100;
    eo.sync_limit = 10;  // a follower gives up on a silent leader after 1 s
    eo.max_session_timeout_ms = 4000;
    // Election connections to a cut-off or dead peer time out after 0.5 s, not 5 s.
    eo.jvm_flags = {"-Dzookeeper.cnxTimeout=500"};
    eo.extra_config = {"forceSync=no"};
    ensemble_ = std::make_unique<Ensemble>(eo);

    SessionOptions so;
    so.connect = ensemble_->connect_string();
    so.session_timeout = 4000ms;
    so.connect_timeout = 30s;
    observer_ = std::make_unique<Session>(so);
    observer_->connect();

    links_.resize(options_.clients);
    for (std::size_t c = 0; c < options_.clients; ++c) {
        SessionOptions co;
        co.session_timeout = options_.session_timeout;
        co.connect_timeout = 30s;
        if (options_.links) {
            std::string connect;
            for (std::size_t n = 0; n < ensemble_->size(); ++n) {
                links_[c].push_back(std::make_unique<FaultyLink>(ensemble_->node(n).port()));
                connect += (connect.empty() ? "" : ",") + links_[c].back()->connect_string();
            }
            co.connect = connect;
        } else {
            co.connect = ensemble_->connect_string();
        }
        clients_.push_back(std::make_unique<ChaosClient>("c" + std::to_string(c + 1), co, options_.client, ledger_, rng_()));
    }
}

ChaosCluster::~ChaosCluster() {
    // A test that failed half way may leave a fault in force: lift the client
    // faults first, so the clients can release and stop quickly.
    for (auto& per_client : links_)
        for (auto& l : per_client) {
            try {
                l->heal();
            } catch (...) {
            }
            l->delay(0ms);
        }
    // Stopping every worker at once, then each one's destructor waits for its own.
    for (auto& c : clients_) c->request_stop();
    clients_.clear();
    observer_.reset();
    links_.clear();
    try {
        ensemble_->heal();
    } catch (...) {
    }
    ensemble_.reset();
}

FaultyLink& ChaosCluster::link(std::size_t client, std::size_t node) { return *links_.at(client).at(node); }

void ChaosCluster::log(const std::string& line) const {
    if (options_.log) options_.log(line);
}

void ChaosCluster::start() {
    for (auto& c : clients_) c->start();
}

std::string ChaosCluster::freeze_a_holder(std::size_t fallback, std::chrono::milliseconds duration) {
    // A holder is in its critical section for a few milliseconds at a time:
    // freeze one, and when its worker stopped outside the section (it had just
    // left), thaw it and try again, a few times.
    ChaosClient* frozen = nullptr;
    bool in_section = false;
    for (int attempt = 0; attempt < 20 && !in_section; ++attempt) {
        if (frozen) frozen->thaw();
        std::vector<std::size_t> holders;
        wait_for([&] {
            for (std::size_t i = 0; i < clients_.size(); ++i)
                if (clients_[i]->in_section() && !clients_[i]->frozen()) holders.push_back(i);
            return !holders.empty();
        }, 2s);
        const auto i = holders.empty() ? fallback % clients_.size() : holders[draw(rng_, holders.size())];
        frozen = clients_[i].get();
        frozen->freeze();
        // Where the worker stopped: in its critical section, it writes when thawed.
        wait_for([&] { return frozen->worker_frozen(&in_section) || frozen->hung(); },
                 options_.client.acquire_timeout + 2s);
    }
    auto& c = *frozen;
    const auto token = c.token();
    const auto start = clock::now();
    bool overtaken = false;
    if (in_section) {
        // Thawed as soon as someone else wrote with a newer token (the holder's
        // late write is then sure to meet a newer token), or after `duration`.
        overtaken = wait_for([&] {
            const auto t = ledger_.fenced_token();
            return t && *t > token;
        }, duration);
    } else {
        hold_for(duration);
    }
    const auto held = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start);
    c.thaw();
    return "froze " + c.name() + (in_section ? " in its critical section (token " + std::to_string(token) + ")"
                                             : " outside its critical section") +
           " for " + std::to_string(held.count()) + " ms" +
           (overtaken ? ", until another client wrote with a newer token" : "");
}

std::string ChaosCluster::apply(const chaos_step& s) {
    ++faults_;
    std::string what;
    const auto quorum = [&] {
        if (!ensemble_->wait_for_quorum(60s)) throw std::runtime_error("chaos: the ensemble has no quorum 60 s after " + what);
    };
    switch (s.fault) {
    case chaos_fault::kill_leader: {
        const auto i = ensemble_->kill_leader();
        what = "kill -9 of the leader, node " + std::to_string(i);
        hold_for(s.duration);
        ensemble_->node(i).restart(false);
        quorum();
        what += ", restarted after " + std::to_string(s.duration.count()) + " ms";
        break;
    }
    case chaos_fault::kill_follower: {
        const auto leader = ensemble_->leader_index();
        std::vector<std::size_t> followers;
        for (std::size_t n = 0; n < ensemble_->size(); ++n)
            if (n != leader && ensemble_->node(n).running()) followers.push_back(n);
        if (followers.empty()) {
            what = "kill_follower: no follower (skipped)";
            break;
        }
        const auto i = followers[s.target % followers.size()];
        ensemble_->node(i).kill9();
        what = "kill -9 of follower node " + std::to_string(i);
        hold_for(s.duration);
        ensemble_->node(i).restart(false);
        quorum();
        what += ", restarted after " + std::to_string(s.duration.count()) + " ms";
        break;
    }
    case chaos_fault::pause_server: {
        const auto i = s.target % ensemble_->size();
        auto& node = ensemble_->node(i);
        node.pause_for(s.duration);
        what = "SIGSTOP of node " + std::to_string(i) + " for " + std::to_string(s.duration.count()) + " ms";
        if (!wait_for([&] { return !node.paused(); }, s.duration + 10s))
            throw std::runtime_error("chaos: node " + std::to_string(i) + " was not resumed");
        quorum();
        break;
    }
    case chaos_fault::partition_leader: {
        const auto i = ensemble_->partition_leader();
        what = "partition of the leader, node " + std::to_string(i) + ", for " + std::to_string(s.duration.count()) + " ms";
        hold_for(s.duration);
        ensemble_->heal();
        quorum();
        break;
    }
    case chaos_fault::blackhole_client:
    case chaos_fault::reset_client:
    case chaos_fault::drop_create_reply:
    case chaos_fault::garble_create_reply:
    case chaos_fault::delay_client: {
        const auto c = s.target % clients_.size();
        const auto name = clients_[c]->name();
        if (!options_.links) {
            what = std::string(to_string(s.fault)) + ": clients have no links (skipped)";
            break;
        }
        auto& links = links_[c];
        if (s.fault == chaos_fault::blackhole_client) {
            for (auto& l : links) l->blackhole();
            what = "blackhole of " + name + " for " + std::to_string(s.duration.count()) + " ms";
            hold_for(s.duration);
            for (auto& l : links) l->heal();
        } else if (s.fault == chaos_fault::reset_client) {
            std::size_t n = 0;
            for (auto& l : links) n += l->reset();
            what = "reset of " + name + "'s connections (" + std::to_string(n) + ")";
        } else if (s.fault == chaos_fault::drop_create_reply || s.fault == chaos_fault::garble_create_reply) {
            const bool garble = s.fault == chaos_fault::garble_create_reply;
            what = std::string(to_string(s.fault)) + ": " + name + " has no open connection (skipped)";
            for (auto& l : links)
                if (l->open_connections() > 0 && !l->drop_armed()) {
                    if (garble) l->garble_next_reply(lock_create_needle());
                    else l->drop_next_reply(lock_create_needle());
                    what = "the reply to " + name + "'s next create will be " + (garble ? "garbled" : "lost");
                    break;
                }
        } else {
            const auto latency = draw_between(rng_, 20ms, 200ms);
            for (auto& l : links) l->delay(latency);
            what = name + "'s links " + std::to_string(latency.count()) + " ms slow for " +
                   std::to_string(s.duration.count()) + " ms";
            hold_for(s.duration);
            for (auto& l : links) l->delay(0ms);
        }
        break;
    }
    case chaos_fault::expire_session: {
        auto& c = *clients_[s.target % clients_.size()];
        try {
            // Closed on the server at once: outside the budget's rule (expiry by silence).
            ledger_.forced_end(c.name(), c.session().session_id());
            zklock::testing::expire_session(c.session());
            what = "expired " + c.name() + "'s session";
        } catch (const zklock::error& e) {
            what = "expire_session of " + c.name() + " skipped: " + e.what();
        }
        break;
    }
    case chaos_fault::freeze_holder: what = freeze_a_holder(s.target, s.duration); break;
    }
    log(what);
    hold_for(s.quiet);
    return what;
}

std::vector<std::string> ChaosCluster::wait_for_progress(std::chrono::milliseconds timeout) {
    std::vector<std::uint64_t> before;
    for (auto& c : clients_) before.push_back(c->grants());
    std::vector<std::string> stalled;
    wait_for([&] {
        for (std::size_t i = 0; i < clients_.size(); ++i)
            if (clients_[i]->grants() <= before[i] && !clients_[i]->hung()) return false;
        return true;
    }, timeout);
    for (std::size_t i = 0; i < clients_.size(); ++i)
        if (clients_[i]->grants() <= before[i]) stalled.push_back(clients_[i]->name());
    return stalled;
}

std::vector<std::string> ChaosCluster::describe_clients() const {
    std::vector<std::string> lines;
    for (const auto& c : clients_) lines.push_back(c->describe_state());
    return lines;
}

chaos_outcome ChaosCluster::finish(std::vector<std::string> stalled, std::chrono::milliseconds timeout) {
    chaos_outcome out;
    out.faults = faults_;
    out.stalled = std::move(stalled);
    // Ask all to stop at once, then wait for each (the deadlines overlap).
    for (auto& c : clients_) c->request_stop();
    const auto deadline = clock::now() + timeout;
    for (auto& c : clients_) {
        const auto left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()), 1ms);
        if (!c->stop(left)) out.hung.push_back(c->name() + " (in " + c->hung_in() + ")");
        else if (c->hung()) out.hung.push_back(c->name() + " (in " + c->hung_in() + ")");
    }
    // Every client has released; its session is still open, so a node of it
    // that is still there is one it left behind.
    std::vector<contender> left;
    wait_for([&] {
        std::error_code ec;
        left = list_contenders(*observer_, options_.client.path, ec);
        return !ec && left.empty();
    }, timeout);
    out.leftovers = left.size();
    for (const auto& n : left) {
        // Whose it is: a client's session (by its id), or none of them.
        std::string owner = "a session of no client";
        for (const auto& c : clients_)
            if (c->session().session_id() == n.owner_session) owner = c->name() + "'s session";
        std::ostringstream who;
        who << n.node << " (owner 0x" << std::hex << n.owner_session << ", " << owner << ")";
        out.leftover_nodes.push_back(who.str());
    }
    out.summary = ledger_.summary();
    for (auto& c : clients_) {
        for (const auto& [reason, n] : c->failed_acquires())
            out.failed_acquires.push_back(c->name() + ": " + reason + " x" + std::to_string(n));
        for (const auto& [reason, n] : c->losses())
            if (reason == "node_deleted")
                out.wrong_losses.push_back(c->name() + ": lock node deleted by another client x" + std::to_string(n));
    }
    finished_ = true;
    return out;
}

}  // namespace zklock::lab
