// SPDX-License-Identifier: Apache-2.0
// Per-target series bookkeeping: the values a target's next snapshot shows.
#include "target_series.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lockwatch::exporter {

void HistogramValues::observe(double value) {
  const auto bucket = std::lower_bound(upper_bounds.begin(), upper_bounds.end(), value) - upper_bounds.begin();
  ++counts[static_cast<std::size_t>(bucket)];
  sum += value;
}

std::uint64_t HistogramValues::count() const { return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0}); }

void TargetSeries::count(Family f, const std::map<LabelValues, double>& totals) {
  auto& shown = current_.of(f);
  for (const auto& [values, total] : totals) {
    if (!std::isfinite(total)) continue;  // one NaN would stick to the counter for good
    // A new counter shows its total even at 0: "seen, nothing yet" differs from "never seen".
    auto [it, fresh] = shown.try_emplace(values, total);
    if (!fresh) it->second = std::max(it->second, total);
  }
}

void TargetSeries::show(Family f, std::map<LabelValues, double> values) { current_.of(f) = std::move(values); }

void TargetSeries::observe(Family f, const std::vector<double>& values, const std::vector<double>& upper_bounds) {
  auto [it, fresh] = current_.histograms.try_emplace(f);
  auto& h = it->second;
  if (fresh) {
    h.upper_bounds = upper_bounds;
    h.counts.assign(upper_bounds.size() + 1, 0);
  }
  // A NaN would poison the histogram's sum for good; a negative duration is a clock glitch.
  for (double v : values)
    if (std::isfinite(v) && v >= 0) h.observe(v);
}

}  // namespace lockwatch::exporter
