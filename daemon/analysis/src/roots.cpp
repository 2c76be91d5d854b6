// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/roots.hpp"

#include <algorithm>
#include <set>
#include <tuple>

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

Walk walk_from(std::uint32_t wait, const std::vector<std::optional<std::uint32_t>>& next,
               const std::vector<std::uint32_t>& lock) {
  Walk out;
  std::vector<std::uint32_t> seen;  // waits visited: a holder met again closes a cycle
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
  return out;
}

}  // namespace

std::vector<std::optional<std::uint32_t>> next_waits(const LockGraph& g, const std::vector<InferredHolder>& inferred) {
  std::map<std::uint32_t, std::uint32_t> wait_of_thread;  // each thread waits for at most one lock
  for (std::uint32_t i = 0; i < g.waits.size(); ++i) wait_of_thread.emplace(g.waits[i].thread, i);
  std::vector<std::optional<std::uint32_t>> holder(g.waits.size());
  for (std::uint32_t i = 0; i < g.waits.size(); ++i) holder[i] = g.waits[i].holder;
  for (const auto& h : inferred)
    if (h.wait < holder.size() && !holder[h.wait]) holder[h.wait] = h.thread;
  std::vector<std::optional<std::uint32_t>> next(g.waits.size());
  for (std::size_t i = 0; i < holder.size(); ++i)
    if (holder[i])
      if (auto it = wait_of_thread.find(*holder[i]); it != wait_of_thread.end()) next[i] = it->second;
  return next;
}

Roots find_roots(const std::vector<std::optional<std::uint32_t>>& next, const std::vector<std::uint32_t>& lock) {
  Roots out;
  std::map<std::uint32_t, std::set<std::uint32_t>> behind;  // lock -> waits (threads) behind it
  std::map<std::uint32_t, Walk> longest;                    // root (or cycle entry) -> its longest chain
  for (std::uint32_t w = 0; w < lock.size(); ++w) {
    auto walk = walk_from(w, next, lock);
    for (auto l : walk.locks) behind[l].insert(w);  // a set: a lock met twice counts the thread once
    if (walk.locks.size() < 2) continue;
    auto& best = longest[walk.locks.back()];
    if (walk.locks.size() > best.locks.size()) best = std::move(walk);
  }
  for (const auto& [l, threads] : behind) out.transitive[l] = static_cast<std::uint32_t>(threads.size());
  for (auto& [root, walk] : longest) out.chains.push_back({std::move(walk.locks), out.transitive[root], walk.cycle});
  std::stable_sort(out.chains.begin(), out.chains.end(), [](const auto& a, const auto& b) { return a.waiters > b.waiters; });
  return out;
}

}  // namespace lockwatch::analysis
