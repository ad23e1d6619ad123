// Cooperative revocation against a real server, zklock on both sides (the
// Curator side is in test_interop_curator.cpp): a revocable lock lets go when
// asked, by default or through its handler; one that is not revocable keeps
// the lock, and the waiter behind it does not take the request (a data change
// of the node it watches) for a release mark; every recipe where revocation
// means something: a semaphore's permits, a read-write lock's readers, a lock
// set, an election's leader; bad requests get a clear error.
#include "proof_support.hpp"
#include "support.hpp"

#include <zklock/acl.hpp>
#include <zklock/error.hpp>
#include <zklock/leader_election.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>
#include <zklock/revocation.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

using namespace zklock;
using namespace zklock::test;

namespace {

/// The lock events of one lock, kept for the test (shared with the handler,
/// which may run after the test's locals are gone).
struct event_log {
    std::mutex m;
    std::vector<lock_event> seen;

    static std::shared_ptr<event_log> on(auto& lock) {
        auto log = std::make_shared<event_log>();
        lock.on_event([log](const lock_event& e) {
            std::lock_guard l(log->m);
            log->seen.push_back(e);
        });
        return log;
    }
    /// The first event of `kind`, once it came (deadline 10 s).
    std::optional<lock_event> wait_for(lock_event_kind kind) {
        std::optional<lock_event> found;
        wait_until([&] {
            std::lock_guard l(m);
            const auto it = std::find_if(seen.begin(), seen.end(), [&](const lock_event& e) { return e.kind == kind; });
            if (it != seen.end()) found = *it;
            return found.has_value();
        });
        if (!found) ADD_FAILURE() << "no " << to_string(kind) << " event within 10 s";
        return found;
    }
    std::vector<lock_event_kind> kinds() {
        std::lock_guard l(m);
        std::vector<lock_event_kind> out;
        for (const auto& e : seen) out.push_back(e.kind);
        return out;
    }
};

/// The data the server has in `node` (through `s`).
std::string data_of(Session& s, const std::string& path, const std::string& node) {
    for (const auto& c : list_contenders(s, path))
        if (path + "/" + c.node == node) return c.data;
    return "<no such node>";
}

class RevocationTest : public ServerTest {
protected:
    // The suite hands its server on to the next suite of its ctest group.
    static void TearDownTestSuite() {}
};

} // namespace

TEST_F(RevocationTest, ARevocableMutexLetsGoWhenAskedAndItsWaiterHolds) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    MutexOptions o;
    o.revocable = true;
    Mutex holder(*s1, path, o);
    const auto events = event_log::on(holder);
    auto loss = first_loss(holder);
    holder.lock();
    const auto node = holder.node_path();
    Mutex waiter(*s2, path);
    auto granted = granted_at(waiter);
    ASSERT_EQ(wait_for_contenders(*s2, path, 2, 10s).size(), 2u);

    request_revocation(*s2, node);
    EXPECT_EQ(get_within(loss), errc::revoked);
    EXPECT_FALSE(holder.is_held());
    get_within(granted);  // its node went: the waiter holds
    EXPECT_TRUE(waiter.is_held());
    const auto asked = events->wait_for(lock_event_kind::revocation_requested);
    ASSERT_TRUE(asked);
    EXPECT_EQ(asked->reason, errc::revoked);
    const auto lost = events->wait_for(lock_event_kind::lost);
    ASSERT_TRUE(lost);
    EXPECT_EQ(lost->reason, errc::revoked);
    EXPECT_EQ(events->kinds(), (std::vector<lock_event_kind>{lock_event_kind::queued, lock_event_kind::granted,
                                                             lock_event_kind::revocation_requested,
                                                             lock_event_kind::lost}));
    // The same object takes the lock again, revocable as before.
    waiter.unlock();
    auto loss2 = first_loss(holder);
    holder.lock();
    request_revocation(*s2, holder.node_path());
    EXPECT_EQ(get_within(loss2), errc::revoked);
}

TEST_F(RevocationTest, AMutexThatIsNotRevocableKeepsTheLockAndItsWaiterDoesNotTakeTheRequestForARelease) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    Mutex holder(*s1, path);  // not revocable
    const auto events = event_log::on(holder);
    holder.lock();
    const auto node = holder.node_path();
    Mutex waiter(*s2, path);  // marks its releases and trusts its predecessor's marks
    GrantLog log;
    log.holds("holder");
    auto grant = log.lock(waiter, "waiter");
    ASSERT_EQ(wait_for_contenders(*s2, path, 2, 10s).size(), 2u);
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }));

    request_revocation(*s2, node);
    // The holder reads the request and reports it, keeping the lock.
    const auto asked = events->wait_for(lock_event_kind::revocation_requested);
    ASSERT_TRUE(asked);
    EXPECT_FALSE(asked->reason) << asked->reason.message();
    EXPECT_TRUE(holder.is_held());
    // The waiter was told of a data change of the node it watches (as by a
    // release mark), which spent its watch there: the server fired it before
    // answering the request's setData on the same session. Its read of the
    // node then sets the watch again (the server shows it), and it decides on
    // that read's reply, which comes before this listing's on its session: by
    // the listing's end it has decided.
    EXPECT_TRUE(wait_until([&] { return watches(server_->four_letter_word("wchp"), node, s2->session_id()); }))
        << "the waiter does not read the holder's node again";
    EXPECT_EQ(data_of(*s2, path, node), "__REVOKE__");
    EXPECT_FALSE(waiter.is_held()) << "the waiter took the revocation request for its predecessor's release";
    EXPECT_EQ(grant.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
        << "the waiter took the revocation request for its predecessor's release: it holds beside the holder";
    EXPECT_TRUE(holder.is_held());
    EXPECT_EQ(events->kinds(), (std::vector<lock_event_kind>{lock_event_kind::queued, lock_event_kind::granted,
                                                             lock_event_kind::revocation_requested}));
    log.releasing("holder");
    holder.unlock();
    EXPECT_FALSE(get_within(grant));
    EXPECT_EQ(log.entries(), (std::vector<std::string>{"-holder", "+waiter"}))
        << "the waiter took the revocation request for its predecessor's release: it held beside the holder";
    waiter.unlock();
}

TEST_F(RevocationTest, AHandlerDecidesWhenARevocableLockLetsGoAndARequestToAWaiterWaitsForItsGrant) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    auto told = std::make_shared<std::promise<revocation_request>>();
    MutexOptions o;
    o.revocable = true;
    o.on_revocation = [told](const revocation_request& r) { told->set_value(r); };
    Mutex holder(*s1, path, o);
    holder.lock();
    const auto node = holder.node_path();
    request_revocation(*s2, node);
    auto request = told->get_future();
    const auto r = get_within(request);
    EXPECT_EQ(r.path, path);
    EXPECT_EQ(r.node, node);
    EXPECT_TRUE(holder.is_held()) << "a handler given, the lock lets go only when it is unlocked";

    // A request written into a waiter's node is honoured once it holds.
    MutexOptions w;
    w.revocable = true;
    Mutex waiter(*s2, path, w);
    auto loss = first_loss(waiter);
    auto granted = granted_at(waiter);
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }));
    request_revocation(*s1, waiter.node_path());
    holder.unlock();
    get_within(granted);
    EXPECT_EQ(get_within(loss), errc::revoked);
    EXPECT_FALSE(waiter.is_held());
}

TEST_F(RevocationTest, ASemaphoresPermitsAndASharedMutexsReadersLetGoForTheOneWhoAsks) {
    auto s1 = connect();
    auto s2 = connect();
    // Two permits held, a third waits and asks both holders.
    const auto sem_path = lock_path("semaphore");
    SemaphoreOptions so;
    so.revocable = true;
    Semaphore sem(*s1, sem_path, 2, so);
    auto p1 = sem.permit();
    auto p2 = sem.permit();
    auto l1 = first_loss(p1);
    auto l2 = first_loss(p2);
    p1.lock();
    p2.lock();
    Semaphore asking(*s2, sem_path, 2);
    auto p3 = asking.permit();
    auto granted = granted_at(p3);
    ASSERT_TRUE(wait_until([&] { return p3.queue_position() == 2u; }));
    auto expected = std::vector<std::string>{p1.node_path(), p2.node_path()};
    std::sort(expected.begin(), expected.end());
    auto asked = p3.revoke_holders();
    std::sort(asked.begin(), asked.end());
    EXPECT_EQ(asked, expected);
    EXPECT_EQ(get_within(l1), errc::revoked);
    EXPECT_EQ(get_within(l2), errc::revoked);
    get_within(granted);
    EXPECT_TRUE(p3.revoke_holders().empty()) << "it never asks itself";
    p3.unlock();

    // A revocable reader holds; a writer asks it to let go.
    const auto rw_path = lock_path("rw");
    MutexOptions ro;
    ro.revocable = true;
    SharedMutex readers(*s1, rw_path, ro);
    auto reader_loss = first_loss(readers.reader());
    readers.lock_shared();
    SharedMutex writers(*s2, rw_path);
    auto writer_granted = granted_at(writers.writer());
    ASSERT_TRUE(wait_until([&] { return writers.writer().queue_position() == 1u; }));
    const auto reader_node = readers.reader().node_path();
    EXPECT_EQ(writers.writer().revoke_holders(), std::vector<std::string>{reader_node});
    EXPECT_EQ(get_within(reader_loss), errc::revoked);
    get_within(writer_granted);
    writers.unlock();
}

TEST_F(RevocationTest, ALockSetLetsGoOfEveryLockWhenAnyOfItsNodesIsAsked) {
    const auto a = lock_path("a");
    const auto b = lock_path("b");
    auto s1 = connect();
    auto s2 = connect();
    MultiMutexOptions o;
    o.revocable = true;
    MultiMutex set(*s1, {a, b}, o);
    const auto events = event_log::on(set);
    auto loss = first_loss(set);
    set.lock();
    const auto nodes = set.node_paths();
    ASSERT_EQ(nodes.size(), 2u);
    Mutex on_b(*s2, b);
    auto granted = granted_at(on_b);
    ASSERT_TRUE(wait_until([&] { return on_b.queue_position() == 1u; }));
    EXPECT_EQ(on_b.revoke_holders(), std::vector<std::string>{nodes[1]});
    EXPECT_EQ(get_within(loss), errc::revoked);
    get_within(granted);
    // Both nodes went, not only the one asked.
    EXPECT_TRUE(wait_until([&] { return list_contenders(*s2, a).empty(); }));
    const auto asked = events->wait_for(lock_event_kind::revocation_requested);
    ASSERT_TRUE(asked);
    EXPECT_EQ(asked->reason, errc::revoked);
    on_b.unlock();
}

TEST_F(RevocationTest, ALeaderStepsDownWhenAskedAndOneThatIsNotRevocableKeepsLeading) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    LeaderElection stubborn(*s1, path, "stubborn");
    const auto stubborn_events = event_log::on(stubborn);
    stubborn.campaign();
    LeaderElection other(*s2, path, "other");
    ASSERT_EQ(other.revoke_leader(), stubborn.node_path());
    ASSERT_TRUE(stubborn_events->wait_for(lock_event_kind::revocation_requested));
    EXPECT_TRUE(stubborn.is_leader());
    // Observers see the request where the leader's id was.
    const auto info = other.leader();
    ASSERT_TRUE(info);
    EXPECT_TRUE(info->revocation_requested);
    EXPECT_EQ(info->participant_id, "");
    EXPECT_EQ(info->epoch, stubborn.leadership()->epoch);
    stubborn.resign();

    LeaderElectionOptions o;
    o.revocable = true;
    LeaderElection yielding(*s1, path, "yielding", o);
    auto loss = first_loss(yielding);
    yielding.campaign();
    auto term = other.async_campaign(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return other.queue_position() == 1u; }));
    const auto leader_node = yielding.node_path();
    EXPECT_EQ(other.revoke_leader(), leader_node);
    EXPECT_EQ(get_within(loss), errc::revoked);
    const auto [campaigned, leadership] = get_within(term);
    EXPECT_FALSE(campaigned) << campaigned.message();
    EXPECT_EQ(leadership.participant_id, "other");
    EXPECT_FALSE(other.revoke_leader()) << "a leader never asks itself";
    other.resign();
}

TEST_F(RevocationTest, BadRequestsAreRefusedWithAClearError) {
    const auto path = lock_path();
    auto s = connect();
    const auto code = [&](const std::string& node) {
        std::error_code ec;
        request_revocation(*s, node, ec);
        return ec;
    };
    EXPECT_EQ(code("locks/no-slash"), errc::invalid_path);
    EXPECT_EQ(code(path + "/"), errc::invalid_path);
    Mutex m(*s, path);
    m.lock();
    // The lock directory is no holder's node: its data stays.
    EXPECT_EQ(code(path), errc::invalid_argument);
    try {
        request_revocation(*s, path);
        ADD_FAILURE() << "no throw";
    } catch (const error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("not a lock node"), std::string::npos) << e.what();
    }
    const auto gone = path + "/_c_4f1c2b7e-9a3d-4e5f-8a6b-0c1d2e3f4a5b-lock-0000000099";
    EXPECT_EQ(code(gone), errc::no_node);
    try {
        request_revocation(*s, gone);
        ADD_FAILURE() << "no throw";
    } catch (const error& e) {
        EXPECT_EQ(e.code(), errc::no_node);
        EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    }
    m.unlock();

    // A node whose ACL does not let this session write it.
    const auth_entry alice{"digest", "alice:alice-secret"};
    const auto guarded = lock_path("guarded");
    create_parents(*s, guarded);  // the parents open: later tests share them
    auto o = options();
    o.auth = {alice};
    o.acl = acls::creator_all();
    Session owner(o);
    owner.connect();
    observer_auth_ = {alice};
    Mutex protected_lock(owner, guarded);
    protected_lock.lock();
    EXPECT_EQ(code(protected_lock.node_path()), errc::no_auth);
    EXPECT_TRUE(protected_lock.is_held());
    protected_lock.unlock();
}
