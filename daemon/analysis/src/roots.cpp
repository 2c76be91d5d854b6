// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/roots.hpp"

#include <algorithm>
#include <utility>

namespace lockwatch::analysis {
namespace {

// A chain longer than this is followed no further: real chains are a few locks long, and a
// dump of thousands of waiters must stay cheap to walk.
constexpr std::size_t max_hops = 64;

struct Walk {
  std::vector<std::uint32_t> locks;  // the lock of each wait passed, in wait-for order: two objects
                                     // of one class at one site (transfer(a, b)) are one lock twice
  bool cycle = false;
};

// Follows the chain from `wait` into `out.locks`; `seen` is scratch space, reused by the caller.
void walk_from(std::uint32_t wait, const std::vector<std::optional<std::uint32_t>>& next,
               const std::vector<std::uint32_t>& lock, std::vector<std::uint32_t>& seen, Walk& out) {
  out.locks.clear();
  out.cycle = false;
  seen.clear();  // waits visited: a holder met again closes a cycle
  std::optional<std::uint32_t> at = wait;
  while (at && seen.size() < max_hops) {
    if (std::find(seen.begin(), seen.end(), *at) != seen.end()) {
      out.cycle = true;
      break;
    }
    seen.push_back(*at);
    out.locks.push_back(lock[*at]);
    at = *at < next.size() ? next[*at] : std::nullopt;
  }
}

// Each lock of a walk once: a lock met twice in one chain counts its thread once. Chains are
// a lock or two as a rule, compared in place; longer ones (up to max_hops) sorted.
void distinct_locks(const Walk& walk, std::vector<std::uint32_t>& out) {
  out.clear();
  if (walk.locks.size() <= 8) {
    for (auto l : walk.locks)
      if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    return;
  }
  out.assign(walk.locks.begin(), walk.locks.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace

std::vector<std::optional<std::uint32_t>> next_waits(const LockGraph& g, const std::vector<InferredHolder>& inferred) {
  // Each thread waits for at most one lock: its first wait, by thread index (a vector, not a map).
  std::uint32_t threads = 0;
  for (const auto& w : g.waits) threads = std::max(threads, w.thread + 1);
  std::vector<std::optional<std::uint32_t>> wait_of_thread(threads);
  for (std::uint32_t i = 0; i < g.waits.size(); ++i)
    if (!wait_of_thread[g.waits[i].thread]) wait_of_thread[g.waits[i].thread] = i;
  std::vector<std::optional<std::uint32_t>> holder(g.waits.size());
  for (std::uint32_t i = 0; i < g.waits.size(); ++i) holder[i] = g.waits[i].holder;
  for (const auto& h : inferred)
    if (h.wait < holder.size() && !holder[h.wait]) holder[h.wait] = h.thread;
  std::vector<std::optional<std::uint32_t>> next(g.waits.size());
  for (std::size_t i = 0; i < holder.size(); ++i)
    if (holder[i] && *holder[i] < wait_of_thread.size()) next[i] = wait_of_thread[*holder[i]];
  return next;
}

Roots find_roots(const std::vector<std::optional<std::uint32_t>>& next, const std::vector<std::uint32_t>& lock) {
  Roots out;
  std::map<std::uint32_t, Walk> longest;  // root (or cycle entry) -> its longest chain
  std::vector<std::uint32_t> seen, locks;
  Walk walk;
  // The waits of one lock come in runs: the last lock's count is kept at hand.
  auto counted = out.transitive.end();
  for (std::uint32_t w = 0; w < lock.size(); ++w) {
    walk_from(w, next, lock, seen, walk);
    distinct_locks(walk, locks);
    for (auto l : locks) {
      if (counted == out.transitive.end() || counted->first != l) counted = out.transitive.try_emplace(l, 0).first;
      ++counted->second;
    }
    if (walk.locks.size() < 2) continue;
    auto& best = longest[walk.locks.back()];
    if (walk.locks.size() > best.locks.size()) best = walk;
  }
  for (auto& [root, chain] : longest) out.chains.push_back({std::move(chain.locks), out.transitive[root], chain.cycle});
  std::stable_sort(out.chains.begin(), out.chains.end(), [](const auto& a, const auto& b) { return a.waiters > b.waiters; });
  return out;
}

}  // namespace lockwatch::analysis
