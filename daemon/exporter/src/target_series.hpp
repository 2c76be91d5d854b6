// SPDX-License-Identifier: Apache-2.0
// The series one target shows, kept across updates: counters only rise and never disappear
// while the target lives, gauges show exactly the latest values, histograms accumulate.
// Plain data on the sampler's side; a scrape sees only copies of it (TargetSnapshot).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "target_snapshot.hpp"

namespace lockwatch::exporter {

class TargetSeries {
 public:
  TargetSeries(std::string target, KubernetesLabels where) {
    current_.target = std::move(target);
    current_.where = std::move(where);
  }

  /// Each counter becomes its total where that is above what it shows; it never goes down,
  /// and a counter missing from `totals` keeps its value.
  void count(Family f, const std::map<LabelValues, double>& totals);
  /// Exactly these gauges of the family: the target's other series of it are gone.
  void show(Family f, std::map<LabelValues, double> values);
  /// Observes the finite, non-negative values into the target's histogram, which exists
  /// from the first call on even without any.
  void observe(Family f, const std::vector<double>& values, const std::vector<double>& upper_bounds);
  /// What the target shows now.
  const TargetSnapshot& current() const noexcept { return current_; }

 private:
  TargetSnapshot current_;
};

}  // namespace lockwatch::exporter
