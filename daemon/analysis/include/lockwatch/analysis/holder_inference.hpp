// SPDX-License-Identifier: Apache-2.0
// The likely owner of a j.u.c. lock in a dump printed without "Locked ownable synchronizers"
// (no -l): such a dump never names it, so it is inferred from the stacks - or not at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
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

/// Lines of the waiters' sites that earlier dumps showed to lie after unlock(). Why: a thread
/// that has left the lock but not yet the site ("lock(); try { work(); } finally { unlock(); }
/// settle();") calls code past the lock() line just as the owner does, and while the lock is
/// free or being handed to a waiter that has not run yet, it is the only thread there - one
/// dump cannot tell it from the owner. Two threads past lock() in one dump can tell: one lock
/// has one owner, so of two such lines of a site the later one lies after unlock() (a line
/// with two threads at once is not under it either). A thread seen at a learned line makes a
/// later dump ambiguous, so what is learned only ever takes inferences away.
class SiteLines {
 public:
  /// At most this many lines are learned (a few per site that has waiters); past it, none.
  static constexpr std::size_t max_lines = 4096;
  bool after_unlock(std::string_view site, std::uint32_t line) const;
  void learn(std::string_view site, std::uint32_t line);
  std::size_t size() const noexcept { return size_; }
  /// Estimated memory: a map node and the site's text per site, four bytes per line.
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::map<std::string, std::vector<std::uint32_t>, std::less<>> lines_;  // per site, sorted
  std::size_t size_ = 0;
  std::size_t bytes_ = 0;
};

/// For each park wait without a holder in a dump that lists no synchronizers: the one thread
/// that is inside the waiters' site and has gone on from it into code it calls (it passed
/// lock()), while no other thread is. A thread parked or spinning in lock plumbing right
/// under the site (acquiring, awaiting a Condition, releasing) or running in the site's own
/// frame (before or after lock(): the dump cannot tell) is no candidate; with two candidates,
/// or one at a line `learned` holds, nothing is inferred. With `learned`, the dump's own
/// candidates teach it (SiteLines). Never a same_dump holder: callers count these apart.
std::vector<InferredHolder> infer_juc_holders(const model::ThreadDump& dump, const LockGraph& g, SiteLines* learned = nullptr);

}  // namespace lockwatch::analysis
