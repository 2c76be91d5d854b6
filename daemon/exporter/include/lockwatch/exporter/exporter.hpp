// SPDX-License-Identifier: Apache-2.0
// Per-target metrics in, Prometheus text exposition out. The sampler calls update() after
// each sample; the HTTP side calls render() per scrape, which only reads what is stored.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "lockwatch/exporter/target_metrics.hpp"

namespace lockwatch::exporter {

struct ExporterOptions {
  /// Label sets per target and family that get their own series; the rest are "other".
  std::size_t top_k = 20;
  /// Upper bounds (seconds) of lockwatch_sample_duration_seconds, finite and strictly
  /// increasing: an attach dump takes milliseconds, a jstack dump or a stopped JVM up to
  /// the timeout.
  std::vector<double> duration_buckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  /// The build's version: lockwatch_build_info{version="..."} 1.
  std::string version = "unknown";
};

/// Thread-safe: update(), remove() and set_targets_skipped() may run on the sampler's thread
/// while render() runs on a scrape's. Each change builds and serializes the changed target's
/// series on the caller's thread, then publishes an immutable exposition by swapping one
/// pointer; render() copies that pointer and concatenates finished text, so a scrape never
/// waits for an update's work, only for a swap, and always sees whole updates.
class Exporter {
 public:
  /// Throws std::invalid_argument for unusable duration buckets: a configuration error
  /// shows at startup, not at the first sample.
  explicit Exporter(ExporterOptions options);
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  /// Takes the target's state after a sample. Counters follow its cumulative totals and
  /// never go down; gauges show its latest sample only.
  void update(const TargetMetrics& metrics);
  /// The target is gone: every series with its target label goes.
  void remove(const std::string& target);
  /// JVMs found but not watched because the target bound is reached (a daemon-wide gauge).
  void set_targets_skipped(std::uint64_t count);
  /// Text exposition format 0.0.4, in a fixed order: families by name, series by target.
  /// Concatenates text serialized at update time: no number is formatted here.
  std::string render() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockwatch::exporter
