// SPDX-License-Identifier: Apache-2.0
// Bounded label sets: per target and family the top K get their own series, the rest
// are summed into series whose varying labels say "other".
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockwatch::exporter {

/// A series' label values in its family's label order; the target label is not among them.
using LabelValues = std::vector<std::string>;

inline constexpr std::string_view other_label_value = "other";

/// How a family folds a label set into "other". A label either varies (lock class, site,
/// pool: it becomes "other") or has a closed set of values (kind: monitor|park), which it
/// keeps so that "other" still says what kind of lock it was; a value outside the set
/// becomes "other" too.
class FoldRule {
 public:
  /// `closed[i]` lists the values label i keeps; empty means label i varies.
  explicit FoldRule(std::vector<std::vector<std::string>> closed) : closed_(std::move(closed)) {}

  /// A closed label's value outside its set becomes "other" (kind="spin", a state Java does
  /// not have): such a label never shows a value it was not declared with.
  LabelValues normalize(const LabelValues& labels) const;
  LabelValues fold(const LabelValues& labels) const;
  /// True for a label set that is its own fold: an "other" series (or a class really named
  /// "other"), or one whose labels all have closed values (state="BLOCKED"), bounded by
  /// their sets. It is shown as it is and never takes a slot, so a slot and "other" can
  /// never be the same series.
  bool needs_no_slot(const LabelValues& labels) const { return fold(labels) == labels; }
  /// The values of the varying labels: what identifies a lock or a pool.
  LabelValues varying_part(const LabelValues& labels) const;

 private:
  std::vector<std::vector<std::string>> closed_;
};

/// Slots for counters. A label set gets its own series when it is first seen while fewer
/// than K label sets have one; a later newcomer is counted in its fold into "other" for
/// good. Slots are never given back, so every exported series only goes up as long as
/// the cumulative totals do. Only the owners are remembered: at most K label sets.
class StickySlots {
 public:
  StickySlots(std::size_t capacity, FoldRule rule) : capacity_(capacity), rule_(std::move(rule)) {}

  /// Cumulative totals per label set (normalized first) -> cumulative totals per exported
  /// series. Newcomers of one call take free slots largest total first (ties: label
  /// order), so the slots go to the busiest of them.
  std::map<LabelValues, std::uint64_t> assign(const std::map<LabelValues, std::uint64_t>& totals);
  const std::set<LabelValues>& owners() const noexcept { return owners_; }

 private:
  void claim_slots(const std::map<LabelValues, std::uint64_t>& totals);

  std::size_t capacity_;
  FoldRule rule_;
  std::set<LabelValues> owners_;
};

/// Gauges of one sample, bounded. Label sets are normalized, grouped by their varying
/// labels (a lock; a pool with its states), groups ranked by their sum (largest first,
/// ties: label order), and whole groups kept while the family stays within `k` label sets;
/// everything else is summed into its fold into "other". Gauges need no stickiness: each
/// sample shows its own top K.
std::map<LabelValues, std::uint64_t> cap_gauges(const std::map<LabelValues, std::uint64_t>& values,
                                                std::size_t k, const FoldRule& rule);

}  // namespace lockwatch::exporter
