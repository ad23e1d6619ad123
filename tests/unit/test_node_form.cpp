// The names zklock writes in each naming (zklock::node_names, src/fsm/node_form.hpp):
// spelled as each peer spells its own, read back by zklock with the right kind,
// and carrying the tag a lost create reply is recovered by.
#include "fsm/dialect.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/node_form.hpp"
#include <zklock/node_names.hpp>

#include "node_name_samples.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace zklock::detail;
using zklock::node_names;
using zklock::test::hex32;
using zklock::test::seq;
using zklock::test::uuid;

namespace {

constexpr node_names every_naming[] = {node_names::zklock, node_names::curator, node_names::kazoo};
constexpr node_role every_role[] = {node_role::lock, node_role::writer, node_role::reader, node_role::leader,
                                    node_role::permit};

// Our node in `names` for `role`, with a fresh tag, as the server would name it.
std::string named_node(node_names names, node_role role, std::int32_t s, std::string* tag = nullptr) {
    const auto form = form_of(names, role).value();
    const auto t = new_tag(form);
    if (tag) *tag = t;
    return node_name_prefix(t, form) + seq(s);
}

queue_rule read_write(node_role role, node_names names) {
    queue_rule r;
    r.read_write = true;
    r.role = role;
    r.names = names;
    return r;
}
} // namespace

TEST(NodeForm, SpellsEachRoleAsThePeerDoes) {
    struct expected {
        node_names names;
        node_role role;
        std::string name;  // with the tag uuid (hex32 for kazoo) and sequence 7
    };
    const std::vector<expected> cases{
        {node_names::zklock, node_role::lock, "_c_" + uuid + "-lock-" + seq(7)},
        {node_names::zklock, node_role::writer, "_c_" + uuid + "-write-" + seq(7)},
        {node_names::zklock, node_role::reader, "_c_" + uuid + "-read-" + seq(7)},
        {node_names::zklock, node_role::leader, "_c_" + uuid + "-lock-" + seq(7)},
        {node_names::zklock, node_role::permit, "_c_" + uuid + "-lock-" + seq(7)},
        // Curator: InterProcessMutex, InterProcessReadWriteLock, LeaderLatch (all with protection).
        {node_names::curator, node_role::lock, "_c_" + uuid + "-lock-" + seq(7)},
        {node_names::curator, node_role::writer, "_c_" + uuid + "-__WRIT__" + seq(7)},
        {node_names::curator, node_role::reader, "_c_" + uuid + "-__READ__" + seq(7)},
        {node_names::curator, node_role::leader, "_c_" + uuid + "-latch-" + seq(7)},
        // kazoo 2.8: Lock, WriteLock, ReadLock, Election (uuid4().hex + node name).
        {node_names::kazoo, node_role::lock, hex32 + "__lock__" + seq(7)},
        {node_names::kazoo, node_role::writer, hex32 + "__lock__" + seq(7)},
        {node_names::kazoo, node_role::reader, hex32 + "__rlock__" + seq(7)},
        {node_names::kazoo, node_role::leader, hex32 + "__lock__" + seq(7)},
    };
    for (const auto& c : cases) {
        const auto form = form_of(c.names, c.role);
        ASSERT_TRUE(form) << c.name;
        const auto& tag = form->bare_hex_tag ? hex32 : uuid;
        EXPECT_EQ(node_name_prefix(tag, *form) + seq(7), c.name);
        EXPECT_EQ(node_name_prefix_size(*form), node_name_prefix(tag, *form).size()) << c.name;
    }
}

TEST(NodeForm, ASemaphoreHasOnlyZklocksNames) {
    EXPECT_TRUE(form_of(node_names::zklock, node_role::permit));
    EXPECT_FALSE(form_of(node_names::curator, node_role::permit));
    EXPECT_FALSE(form_of(node_names::kazoo, node_role::permit));
}

TEST(NodeForm, TagsAreFreshAndShapedForTheirForm) {
    for (const auto names : every_naming) {
        const auto form = *form_of(names, node_role::lock);
        const auto a = new_tag(form), b = new_tag(form);
        EXPECT_NE(a, b);
        EXPECT_EQ(a.size(), form.bare_hex_tag ? 32u : 36u) << a;
        EXPECT_EQ(form.bare_hex_tag, std::none_of(a.begin(), a.end(), [](char c) { return c == '-'; })) << a;
        EXPECT_EQ(node_name_prefix(a, form).size(), node_name_prefix_size(form));
    }
}

// What zklock writes it reads as a contender of the role's kind, in the dialect
// the peer's recipe shows in `zklock status`.
TEST(NodeForm, EveryNameWrittenIsReadWithItsRolesKind) {
    for (const auto names : every_naming)
        for (const auto role : every_role) {
            if (!form_of(names, role)) continue;
            const auto name = named_node(names, role, 42);
            const auto n = recognise(name);
            ASSERT_TRUE(n) << name;
            EXPECT_EQ(n->sequence, 42) << name;
            EXPECT_EQ(n->kind, role == node_role::reader ? contender_kind::shared : contender_kind::exclusive) << name;
            const bool curator_only = names == node_names::curator && role != node_role::lock;
            const auto who = names == node_names::kazoo ? dialect::kazoo
                             : curator_only             ? dialect::curator
                                                        : dialect::zklock;
            EXPECT_EQ(n->dialect, who) << name;
            EXPECT_EQ(n->lock_form, form_of(names, role)->marker == lock_marker) << name;
        }
}

// A lost create reply: the attempt finds the node the server made by its tag,
// in every form, among other contenders of every dialect.
TEST(NodeForm, TheTagFindsOurNodeAgain) {
    for (const auto names : every_naming)
        for (const auto role : every_role) {
            if (!form_of(names, role)) continue;
            std::string tag;
            const auto name = named_node(names, role, 9, &tag);
            const std::vector<std::string> children{named_node(node_names::kazoo, node_role::reader, 7),
                                                    named_node(node_names::curator, node_role::writer, 8), name,
                                                    named_node(node_names::zklock, node_role::lock, 10)};
            EXPECT_EQ(find_by_guid(children, tag), name);
        }
}

// The queue rules find our own node in a peer's spelling and give it its kind.
TEST(NodeForm, AMutexInKazoosNamesQueuesWithKazoo) {
    queue_rule mutex;
    mutex.names = node_names::kazoo;
    const auto kazoo_holder = hex32 + "__lock__" + seq(1);
    const auto me = named_node(node_names::kazoo, node_role::lock, 2);
    const auto d = decide(mutex, {me, kazoo_holder}, me);
    EXPECT_TRUE(d.found);
    EXPECT_FALSE(d.acquired);
    EXPECT_EQ(d.position, 1u);
    EXPECT_EQ(d.watch, std::vector<std::string>{kazoo_holder});
    EXPECT_TRUE(decide(mutex, {me}, me).acquired);
}

TEST(NodeForm, ASharedMutexsReaderInAPeersNamesSharesAndItsWriterExcludes) {
    for (const auto names : {node_names::curator, node_names::kazoo}) {
        const auto zk_reader = named_node(node_names::zklock, node_role::reader, 1);
        const auto reader = named_node(names, node_role::reader, 2);
        const auto writer = named_node(names, node_role::writer, 3);
        const auto late_reader = named_node(names, node_role::reader, 4);
        const std::vector<std::string> children{late_reader, writer, reader, zk_reader};
        const auto r = decide(read_write(node_role::reader, names), children, reader);
        EXPECT_TRUE(r.found && r.acquired) << reader << " is not read as a reader";
        const auto w = decide(read_write(node_role::writer, names), children, writer);
        EXPECT_TRUE(w.found);
        EXPECT_FALSE(w.acquired) << writer << " holds beside readers";
        EXPECT_EQ(w.watch, std::vector<std::string>{reader});
        const auto late = decide(read_write(node_role::reader, names), children, late_reader);
        EXPECT_TRUE(late.found);
        EXPECT_FALSE(late.acquired) << writer << " is not read as a writer";
        EXPECT_EQ(late.watch, std::vector<std::string>{writer});
    }
}

TEST(NodeNames, TextRoundTrips) {
    for (const auto names : every_naming) EXPECT_EQ(zklock::parse_node_names(zklock::to_string(names)), names);
    EXPECT_FALSE(zklock::parse_node_names("Curator"));
    EXPECT_FALSE(zklock::parse_node_names(""));
    EXPECT_FALSE(zklock::parse_node_names("go-zookeeper"));
}
