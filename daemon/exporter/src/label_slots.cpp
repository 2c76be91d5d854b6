// SPDX-License-Identifier: Apache-2.0
// Top-K label slots for counters (sticky) and gauges (per sample), with "other" folding.
#include "lockwatch/exporter/label_slots.hpp"

#include <algorithm>
#include <utility>

namespace lockwatch::exporter {
namespace {

using Totals = std::map<LabelValues, std::uint64_t>;

bool busier(const std::pair<LabelValues, std::uint64_t>& a, const std::pair<LabelValues, std::uint64_t>& b) {
  return a.second != b.second ? a.second > b.second : a.first < b.first;
}

Totals normalized(const Totals& totals, const FoldRule& rule) {
  Totals out;
  for (const auto& [labels, n] : totals) out[rule.normalize(labels)] += n;
  return out;
}

struct Group {
  std::uint64_t sum = 0;
  std::vector<const Totals::value_type*> members;
};

// Groups by varying labels, ranked busiest first.
std::vector<std::pair<LabelValues, Group>> ranked_groups(const Totals& values, const FoldRule& rule) {
  std::map<LabelValues, Group> groups;
  for (const auto& entry : values) {
    if (rule.needs_no_slot(entry.first)) continue;
    auto& g = groups[rule.varying_part(entry.first)];
    g.sum += entry.second;
    g.members.push_back(&entry);
  }
  std::vector<std::pair<LabelValues, Group>> ranked(groups.begin(), groups.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second.sum > b.second.sum; });
  return ranked;
}

}  // namespace

LabelValues FoldRule::normalize(const LabelValues& labels) const {
  LabelValues out = labels;
  for (std::size_t i = 0; i < out.size() && i < closed_.size(); ++i) {
    const auto& keep = closed_[i];
    if (!keep.empty() && std::find(keep.begin(), keep.end(), out[i]) == keep.end()) out[i] = other_label_value;
  }
  return out;
}

LabelValues FoldRule::fold(const LabelValues& labels) const {
  LabelValues folded = normalize(labels);
  for (std::size_t i = 0; i < folded.size() && i < closed_.size(); ++i)
    if (closed_[i].empty()) folded[i] = other_label_value;
  return folded;
}

LabelValues FoldRule::varying_part(const LabelValues& labels) const {
  LabelValues part;
  for (std::size_t i = 0; i < labels.size() && i < closed_.size(); ++i)
    if (closed_[i].empty()) part.push_back(labels[i]);
  return part;
}

void StickySlots::claim_slots(const Totals& totals) {
  std::vector<std::pair<LabelValues, std::uint64_t>> newcomers;
  for (const auto& entry : totals)
    if (!owners_.contains(entry.first) && !rule_.needs_no_slot(entry.first)) newcomers.push_back(entry);
  std::sort(newcomers.begin(), newcomers.end(), busier);
  for (auto& n : newcomers) {
    if (owners_.size() >= capacity_) break;
    owners_.insert(std::move(n.first));
  }
}

Totals StickySlots::assign(const Totals& raw) {
  const Totals totals = normalized(raw, rule_);
  claim_slots(totals);
  Totals series;
  for (const auto& [labels, total] : totals)
    series[owners_.contains(labels) ? labels : rule_.fold(labels)] += total;
  return series;
}

Totals cap_gauges(const Totals& raw, std::size_t k, const FoldRule& rule) {
  const Totals values = normalized(raw, rule);
  Totals series;
  std::size_t kept = 0;
  bool full = false;
  for (const auto& [key, group] : ranked_groups(values, rule)) {
    full = full || kept + group.members.size() > k;  // a prefix: nothing smaller shows while a bigger one is folded
    if (!full) kept += group.members.size();
    for (const auto* m : group.members) series[full ? rule.fold(m->first) : m->first] += m->second;
  }
  for (const auto& [labels, value] : values)
    if (rule.needs_no_slot(labels)) series[labels] += value;
  return series;
}

}  // namespace lockwatch::exporter
