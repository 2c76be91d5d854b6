// SPDX-License-Identifier: Apache-2.0
// The series one target has in the registry: counters only rise, gauges show exactly the
// latest values, and removing the target finds every series it ever got.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "metric_catalog.hpp"
#include "prometheus_registry.hpp"

namespace lockwatch::exporter {

class TargetSeries {
 public:
  TargetSeries(std::string target, KubernetesLabels where, PrometheusRegistry& registry)
      : target_(std::move(target)), where_(std::move(where)), registry_(&registry) {}

  /// Each counter becomes its total where that is above what it shows; it never goes down.
  void count(Family f, const std::map<LabelValues, double>& totals);
  /// Exactly these gauges of the family: the target's other series of it are removed.
  void show(Family f, const std::map<LabelValues, double>& values);
  /// Observes the finite, non-negative values into the target's histogram.
  void observe(Family f, const std::vector<double>& values);
  /// Drops every series of the target.
  void remove_all();

 private:
  SeriesLabels labels(Family f, const LabelValues& values) const { return series_labels(f, target_, values, where_); }

  std::string target_;
  KubernetesLabels where_;
  PrometheusRegistry* registry_;
  std::map<Family, std::map<LabelValues, double>> counted_;  // counters: the value each one shows
  std::map<Family, std::set<LabelValues>> shown_;            // gauges and histograms that exist
};

}  // namespace lockwatch::exporter
