// SPDX-License-Identifier: Apache-2.0
// The one door to prometheus-cpp: series by family and labels in, exposition text out.
// Standard library only here, so nothing else in lockwatch compiles against prometheus-cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "metric_catalog.hpp"

namespace lockwatch::exporter {

class PrometheusRegistry {
 public:
  explicit PrometheusRegistry(std::vector<double> duration_buckets);
  ~PrometheusRegistry();
  PrometheusRegistry(const PrometheusRegistry&) = delete;
  PrometheusRegistry& operator=(const PrometheusRegistry&) = delete;

  void set_gauge(Family f, const SeriesLabels& labels, double value);
  /// Adds `delta` (> 0) to the counter, which starts at 0 when it is new.
  void add_counter(Family f, const SeriesLabels& labels, double delta);
  void observe(Family f, const SeriesLabels& labels, const std::vector<double>& values);
  /// Drops the series; nothing happens if it does not exist.
  void remove(Family f, const SeriesLabels& labels);
  /// Text exposition format 0.0.4, families by name and series by target then labels, so
  /// equal contents always print equal bytes.
  std::string render() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockwatch::exporter
