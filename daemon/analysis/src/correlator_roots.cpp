// SPDX-License-Identifier: Apache-2.0
// The correlator's part of holder inference and chains of waits: what each dump keeps of them.
#include <algorithm>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/roots.hpp"

namespace lockwatch::analysis {

void Correlator::add_inferred_and_chains(const model::ThreadDump& dump, const LockGraph& g, Sample& s) {
  const auto inferred = infer_juc_holders(dump, g, &site_lines_);
  for (const auto& h : inferred)
    s.inferred.emplace_back(h.wait, tables_.holder(thread_name(dump, h.thread), view_ids_.name(tables_, h.site), view_ids_.name(tables_, h.busy_at)));
  std::vector<std::uint32_t> lock(s.waits.size());
  for (std::size_t i = 0; i < s.waits.size(); ++i) lock[i] = s.waits[i].key;
  const auto roots = find_roots(next_waits(g, inferred), lock);
  for (const auto& [key, n] : roots.transitive) s.transitive.emplace_back(key, n);
  for (std::size_t c = 0; c < roots.chains.size() && c < options_.named_waiters; ++c) {
    ChainSummary chain{{}, roots.chains[c].waiters, roots.chains[c].deadlock};
    for (auto key : roots.chains[c].locks) chain.locks.push_back(to_key(tables_.keys[key]));
    s.summary.chains.push_back(std::move(chain));
  }
}

// Inferred holders stay apart from the dump's own: they never resolve a neighbour's waiters.
std::optional<Correlator::HolderRef> Correlator::inferred_holder(const Sample& s, std::size_t wait) const {
  auto it = std::lower_bound(s.inferred.begin(), s.inferred.end(), wait, [](const auto& p, std::size_t w) { return p.first < w; });
  if (it == s.inferred.end() || it->first != wait) return std::nullopt;
  return holder_of(it->second);
}

}  // namespace lockwatch::analysis
