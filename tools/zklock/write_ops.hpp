// What `zklock write` makes of its words: the guarded transaction's
// operations ("create PATH DATA", "set:3 PATH DATA", ...) and the lock nodes
// that guard it (ZKLOCK_LOCK_NODE: one node, or a lock set's, a line each).
// Pure functions; unit-tested.
#pragma once

#include <zklock/guarded_write.hpp>

#include <functional>
#include <string>
#include <vector>

namespace zklock::cli {

/// The operations, or the reason the words are refused (`error` non-empty).
struct write_ops {
    std::vector<guarded_op> ops;
    std::string error;
};

/// Reads OP words: `create PATH DATA`, `sequential PREFIX DATA`, `set PATH
/// DATA`, `delete PATH`, `check PATH`; set, delete and check take a version
/// after a colon (`set:3`: only while PATH is at version 3). A DATA of "-" is
/// what `read_stdin()` gives (at most once).
write_ops parse_write_ops(const std::vector<std::string>& words, const std::function<std::string()>& read_stdin);

/// The nodes of a ZKLOCK_LOCK_NODE value: its non-empty lines.
std::vector<std::string> lock_nodes_of(const std::string& value);

} // namespace zklock::cli
