// SPDX-License-Identifier: Apache-2.0
// Per-target series bookkeeping over the registry.
#include "target_series.hpp"

#include <algorithm>
#include <cmath>

namespace lockwatch::exporter {

void TargetSeries::count(Family f, const std::map<LabelValues, double>& totals) {
  auto& shown = counted_[f];
  for (const auto& [values, total] : totals) {
    if (!std::isfinite(total)) continue;  // one NaN would stick to the counter for good
    auto [it, fresh] = shown.try_emplace(values, 0.0);
    // A new counter is created even at 0: "seen, nothing yet" differs from "never seen".
    if (total > it->second || fresh) registry_->add_counter(f, labels(f, values), std::max(total - it->second, 0.0));
    it->second = std::max(total, it->second);
  }
}

void TargetSeries::show(Family f, const std::map<LabelValues, double>& values) {
  auto& shown = shown_[f];
  for (auto it = shown.begin(); it != shown.end();) {
    if (values.contains(*it)) { ++it; continue; }
    registry_->remove(f, labels(f, *it));
    it = shown.erase(it);
  }
  for (const auto& [v, value] : values) {
    registry_->set_gauge(f, labels(f, v), value);
    shown.insert(v);
  }
}

void TargetSeries::observe(Family f, const std::vector<double>& values) {
  std::vector<double> usable;
  // A NaN would poison the histogram's sum for good; a negative duration is a clock glitch.
  for (double v : values)
    if (std::isfinite(v) && v >= 0) usable.push_back(v);
  registry_->observe(f, labels(f, {}), usable);
  shown_[f].insert(LabelValues{});  // not insert({}): that is the empty initializer list
}

void TargetSeries::remove_all() {
  for (const auto& [f, series] : counted_)
    for (const auto& [values, _] : series) registry_->remove(f, labels(f, values));
  for (const auto& [f, series] : shown_)
    for (const auto& values : series) registry_->remove(f, labels(f, values));
  counted_.clear();
  shown_.clear();
}

}  // namespace lockwatch::exporter
