// SPDX-License-Identifier: Apache-2.0
// The likely owner of a j.u.c. lock in a dump printed without "Locked ownable synchronizers"
// (no -l): such a dump never names it, so it is inferred from the stacks - or not at all.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::analysis {

struct InferredHolder {
  std::uint32_t wait = 0;     // index into LockGraph::waits
  std::uint32_t thread = 0;   // the likely owner: index into ThreadDump::threads
  std::string_view site;      // where it took the lock: the waiters' site, which is in its stack
  std::string_view busy_at;   // its first non-plumbing frame
};

/// For each park wait without a holder in a dump that lists no synchronizers: the one thread
/// that is inside the waiters' site and has gone on from it into code it calls (it passed
/// lock()), while no other thread is. A thread parked or spinning in lock plumbing right
/// under the site (acquiring, awaiting a Condition, releasing) or running in the site's own
/// frame (before or after lock(): the dump cannot tell) is no candidate; with two candidates
/// nothing is inferred. Never a same_dump holder: callers count these apart.
std::vector<InferredHolder> infer_juc_holders(const model::ThreadDump& dump, const LockGraph& g);

}  // namespace lockwatch::analysis
