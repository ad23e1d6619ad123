// The descriptors CMD may get: 0, 1, 2 and those zklock itself inherited from
// its parent (`zklock run /x -- cmd 7<file` passes fd 7 on), never one that
// zklock or the library opened (the ZooKeeper socket, a signalfd, a pidfd).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace zklock::cli {

/// Records the descriptors above 2 that are open and not close-on-exec now.
/// Called first thing in main(), before anything opens a descriptor.
void snapshot_inherited_descriptors() noexcept;
/// What snapshot_inherited_descriptors() recorded, ascending.
const std::vector<int>& inherited_descriptors() noexcept;

/// A range of descriptors [first, last] to close.
using descriptor_range = std::pair<unsigned, unsigned>;

/// The ranges that cover every descriptor above 2 except those in `keep`
/// (in any order, duplicates and values below 3 ignored), ascending; the last
/// one ends at the largest unsigned value. Pure.
std::vector<descriptor_range> descriptor_gaps(std::vector<int> keep);

/// Closes the ranges. Async-signal-safe: for the child between fork and exec.
/// Uses close_range(2); where the kernel lacks it, close(2) on each descriptor
/// up to `max_fd` (exclusive; sysconf(_SC_OPEN_MAX), read before the fork).
void close_descriptor_ranges(const descriptor_range* ranges, std::size_t count, long max_fd) noexcept;

} // namespace zklock::cli
