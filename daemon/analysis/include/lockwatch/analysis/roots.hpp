// SPDX-License-Identifier: Apache-2.0
// Chains of waits in one dump: a lock's holder that itself waits for another lock puts every
// waiter of the first behind the second. The lock at the end, whose holder does not wait, is
// the root: releasing it is what unblocks the chain.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "lockwatch/analysis/holder_inference.hpp"
#include "lockwatch/analysis/lock_graph.hpp"

namespace lockwatch::analysis {

/// Per wait of LockGraph::waits: the wait of its lock's holder, when the holder is known in
/// this dump (from the dump itself, or inferred) and waits itself.
std::vector<std::optional<std::uint32_t>> next_waits(const LockGraph& g, const std::vector<InferredHolder>& inferred);

struct WaitChain {
  std::vector<std::uint32_t> locks;  // the lock of each wait from the first to the root (a lock may repeat)
  std::uint32_t waiters = 0;         // threads waiting for the root, directly or behind holders
  bool deadlock = false;             // the chain runs into a cycle: there is no root
};

struct Roots {
  /// Lock id -> threads waiting for it directly or behind holders that wait for it (each
  /// thread once, also when its chain is a cycle).
  std::map<std::uint32_t, std::uint32_t> transitive;
  /// The longest chain of two or more locks ending at each root (or entering each cycle),
  /// most waiters first.
  std::vector<WaitChain> chains;
};

/// `next[w]`: the wait its holder makes (next_waits); `lock[w]`: an id of the lock wait w is
/// for (waits of one lock share it). Pure: no dump needed, so synthetic graphs test it.
Roots find_roots(const std::vector<std::optional<std::uint32_t>>& next, const std::vector<std::uint32_t>& lock);

}  // namespace lockwatch::analysis
