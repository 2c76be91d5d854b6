// SPDX-License-Identifier: Apache-2.0
// The values one part of the exposition shows (a target's series, or the daemon-wide ones)
// as plain data: the exporter builds it on the sampler's side, the registry serializes it,
// and nothing in it changes once it is published.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "metric_catalog.hpp"

namespace lockwatch::exporter {

/// A histogram's cumulative state since its series appeared: exposition wants cumulative
/// buckets, so it is kept whole rather than as observations.
struct HistogramValues {
  std::vector<double> upper_bounds;   // finite, increasing; +Inf is implied
  std::vector<std::uint64_t> counts;  // per bucket, not cumulative: upper_bounds.size() + 1 (the last is +Inf)
  double sum = 0;

  /// Counts `value` in the first bucket whose bound is >= it, as prometheus-cpp does.
  void observe(double value);
  std::uint64_t count() const;
  bool operator==(const HistogramValues&) const = default;
};

/// Counters and gauges by label values, histograms by family; a family without entries has
/// no series (and the exposition shows no HELP or TYPE for it unless another part has some).
struct TargetSnapshot {
  std::string target;  // sanitized; empty for the daemon-wide part
  KubernetesLabels where;
  std::array<std::map<LabelValues, double>, family_count> values;
  std::map<Family, HistogramValues> histograms;

  std::map<LabelValues, double>& of(Family f) { return values[static_cast<std::size_t>(f)]; }
  const std::map<LabelValues, double>& of(Family f) const { return values[static_cast<std::size_t>(f)]; }
};

}  // namespace lockwatch::exporter
