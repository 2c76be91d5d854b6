// SPDX-License-Identifier: Apache-2.0
// The metric families lockwatch exports: names, types, labels and HELP text. The names are
// a contract with dashboards and alerts (docs/metrics.md); change them only on purpose.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/exporter/label_slots.hpp"
#include "lockwatch/exporter/target_metrics.hpp"

namespace lockwatch::exporter {

enum class MetricType : std::uint8_t { counter, gauge, histogram };

enum class Family : std::uint8_t {
  build_info,
  threads,
  virtual_threads,
  lock_waiters,
  lock_waiters_transitive,
  lock_wait_observations,
  lock_holder_observations,
  lock_wait_seconds,
  lock_hold_seconds_max,
  lock_holder_activity,
  pool_cpu_seconds,
  holder_resolution,
  deadlocked_threads,
  pinned_carrier_threads,
  pool_threads,
  event_loop_blocked,
  samples,
  samples_by_form,
  sample_duration,
  target_up,
  last_sample_timestamp,
  jvm_contended_enters,
  jvm_parks,
  jvm_safepoint_seconds,
  jvm_threads_live,
  incidents,
  incident_failures,
  missed_ticks,
  ring_evictions,
  ring_samples,
  ring_bytes,
  targets_skipped,
};
inline constexpr std::size_t family_count = 32;

struct LabelSpec {
  std::string name;
  std::vector<std::string> closed;  // the only values it takes; empty: it comes from the application
};

struct FamilySpec {
  Family family;
  std::string_view name;
  MetricType type;
  std::vector<LabelSpec> labels;    // besides `target`, which every family but the daemon-wide ones has
  std::string_view help;
};

const std::array<FamilySpec, family_count>& catalog();
/// Families of the daemon itself, without a target label.
bool daemon_wide(Family f);
const FamilySpec& spec(Family f);
/// How the family's label sets fold into "other".
FoldRule fold_rule(Family f);

/// Every label of one series, by name: what the registry is keyed by.
using SeriesLabels = std::map<std::string, std::string>;
/// `target` and, when known, `namespace`, `pod` and `container` (values already sanitized) on
/// every family but the daemon-wide ones, then the family's own labels.
SeriesLabels series_labels(Family f, const std::string& target, const LabelValues& values,
                           const KubernetesLabels& where = {});

}  // namespace lockwatch::exporter
