// SPDX-License-Identifier: Apache-2.0
// Exporter: turns each TargetMetrics into bounded, sanitized series of the registry.
#include "lockwatch/export/exporter.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "lockwatch/export/label_slots.hpp"
#include "lockwatch/export/label_values.hpp"
#include "prometheus_registry.hpp"
#include "target_series.hpp"

namespace lockwatch::exporter {
namespace {

using Totals = std::map<LabelValues, std::uint64_t>;
using Values = std::map<LabelValues, double>;

// Sanitizing can make two inputs equal (they differed past the length cap): they are summed.
template <class N>
Totals lock_rows(const std::map<LockLabels, N>& locks) {
  Totals rows;
  for (const auto& [l, n] : locks)
    rows[{sanitize_label_value(l.kind), sanitize_label_value(l.lock_class), sanitize_label_value(l.site)}] += n;
  return rows;
}

template <class N>
Totals named_rows(const std::map<std::string, N>& counts) {
  Totals rows;
  for (const auto& [name, n] : counts) rows[{sanitize_label_value(name)}] += n;
  return rows;
}

Totals pool_rows(const std::map<std::string, std::map<std::string, std::uint32_t>>& pools) {
  Totals rows;
  for (const auto& [pool, states] : pools)
    for (const auto& [state, n] : states) rows[{sanitize_label_value(pool), sanitize_label_value(state)}] += n;
  return rows;
}

// A maximum folds into "other" as the largest of the values it takes in, never their sum:
// the K largest keep their own series, the rest fold.
Values cap_max(const std::map<LockLabels, double>& values, std::size_t k, const FoldRule& rule) {
  std::map<LabelValues, double> rows;
  for (const auto& [l, v] : values) {
    auto& row = rows[rule.normalize({sanitize_label_value(l.kind), sanitize_label_value(l.lock_class), sanitize_label_value(l.site)})];
    row = std::max(row, v);
  }
  std::vector<std::pair<LabelValues, double>> ranked(rows.begin(), rows.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  Values out;
  std::size_t kept = 0;
  for (const auto& [labels, v] : ranked) {
    const bool own = !rule.needs_no_slot(labels) && kept < k;
    kept += own ? 1 : 0;
    auto& row = out[own ? labels : rule.fold(labels)];
    row = std::max(row, v);
  }
  return out;
}

Values as_values(const Totals& totals) {
  Values values;
  for (const auto& [labels, n] : totals) values.emplace(labels, static_cast<double>(n));
  return values;
}

std::string sanitized(const std::string& value) { return value.empty() ? value : sanitize_label_value(value); }

template <class N>
Values single(N value) { return {{LabelValues{}, static_cast<double>(value)}}; }

template <class N>
Values if_present(const std::optional<N>& value) { return value ? single(*value) : Values{}; }

// One target's series plus the top-K state of its bounded families.
class TargetState {
 public:
  TargetState(const std::string& target, const KubernetesLabels& where, PrometheusRegistry& registry, std::size_t k)
      : series_(target, where, registry), where_(where), k_(k) {}

  void count_bounded(Family f, const Totals& totals) {
    auto& slots = slots_.try_emplace(f, k_, fold_rule(f)).first->second;
    series_.count(f, as_values(slots.assign(totals)));
  }
  void show_bounded(Family f, const Totals& values) { series_.show(f, as_values(cap_gauges(values, k_, fold_rule(f)))); }
  // Totals kept as integers (microseconds) and exported in another unit (seconds).
  void count_scaled(Family f, const Totals& totals, double scale) {
    auto& slots = slots_.try_emplace(f, k_, fold_rule(f)).first->second;
    Values values;
    for (const auto& [labels, n] : slots.assign(totals)) values.emplace(labels, static_cast<double>(n) * scale);
    series_.count(f, values);
  }
  void show_max(Family f, const std::map<LockLabels, double>& values) { series_.show(f, cap_max(values, k_, fold_rule(f))); }
  TargetSeries& series() { return series_; }
  const KubernetesLabels& where() const { return where_; }

 private:
  TargetSeries series_;
  KubernetesLabels where_;
  std::size_t k_;
  std::map<Family, StickySlots> slots_;
};

void publish_sampling(TargetState& t, const TargetMetrics& m) {
  t.count_bounded(Family::samples, named_rows(m.totals.samples));
  t.count_bounded(Family::samples_by_form, named_rows(m.totals.samples_by_form));
  t.series().observe(Family::sample_duration, m.new_durations);
  t.series().show(Family::target_up, single(m.up ? 1 : 0));
  t.series().show(Family::last_sample_timestamp, if_present(m.last_sample_time));
  t.series().count(Family::missed_ticks, single(m.totals.missed_ticks));
}

void publish_locks(TargetState& t, const TargetTotals& totals) {
  t.count_bounded(Family::lock_wait_observations, lock_rows(totals.wait_observations));
  t.count_bounded(Family::lock_holder_observations, lock_rows(totals.holder_observations));
  t.count_scaled(Family::lock_wait_seconds, lock_rows(totals.wait_microseconds), 1e-6);
  t.count_bounded(Family::lock_holder_activity, lock_rows(totals.holder_activity));
  t.count_scaled(Family::pool_cpu_seconds, named_rows(totals.pool_cpu_microseconds), 1e-6);
  t.count_bounded(Family::holder_resolution, named_rows(totals.holder_resolution));
  t.series().count(Family::incidents, single(totals.incidents));
  t.series().count(Family::incident_failures, single(totals.incident_failures));
}

// Without a sample there is nothing to show: the latest-sample gauges are absent, not 0.
void publish_latest(TargetState& t, const std::optional<LatestSample>& latest) {
  const LatestSample none;
  const auto& l = latest ? *latest : none;
  t.show_bounded(Family::threads, named_rows(l.threads_by_state));
  t.show_bounded(Family::virtual_threads, named_rows(l.virtual_threads_by_state));
  t.show_bounded(Family::lock_waiters, lock_rows(l.lock_waiters));
  t.show_max(Family::lock_hold_seconds_max, l.lock_hold_seconds_max);
  t.show_bounded(Family::lock_waiters_transitive, lock_rows(l.lock_waiters_transitive));
  t.show_bounded(Family::pool_threads, pool_rows(l.pool_threads));
  t.show_bounded(Family::event_loop_blocked, pool_rows(l.event_loop_blocked));
  t.series().show(Family::deadlocked_threads, latest ? single(l.deadlocked_threads) : Values{});
  t.series().show(Family::pinned_carrier_threads, latest ? single(l.pinned_carrier_threads) : Values{});
}

// hsperfdata counters appear once the JVM publishes them; a counter is never taken back.
void publish_jvm(TargetSeries& s, const JvmPerf& perf) {
  s.count(Family::jvm_contended_enters, if_present(perf.contended_enters));
  s.count(Family::jvm_parks, if_present(perf.parks));
  s.count(Family::jvm_safepoint_seconds, if_present(perf.safepoint_seconds));
  s.show(Family::jvm_threads_live, if_present(perf.threads_live));
}

void publish_ring(TargetSeries& s, const TargetMetrics& m) {
  s.count(Family::ring_evictions, single(m.totals.ring_evictions));
  s.show(Family::ring_samples, single(m.ring_samples));
  s.show(Family::ring_bytes, single(m.ring_bytes));
}

ExporterOptions checked(ExporterOptions options) {
  const auto& b = options.duration_buckets;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (!std::isfinite(b[i]) || (i > 0 && !(b[i - 1] < b[i])))
      throw std::invalid_argument("duration buckets must be finite and strictly increasing");
  return options;
}

}  // namespace

struct Exporter::Impl {
  explicit Impl(ExporterOptions o) : options(std::move(o)), registry(options.duration_buckets) {}

  // A target whose Kubernetes labels became known (or changed) gets new series: the old ones
  // go, and its counters start again from its totals under the new label set.
  TargetState& target(const std::string& label, const KubernetesLabels& where) {
    if (auto it = targets.find(label); it != targets.end() && it->second.where() != where) {
      it->second.series().remove_all();
      targets.erase(it);
    }
    return targets.try_emplace(label, label, where, registry, options.top_k).first->second;
  }

  ExporterOptions options;
  PrometheusRegistry registry;
  mutable std::mutex mutex;
  std::map<std::string, TargetState> targets;  // by sanitized target label
};

Exporter::Exporter(ExporterOptions options) : impl_(std::make_unique<Impl>(checked(std::move(options)))) {
  const LabelValues version{sanitize_label_value(impl_->options.version)};
  impl_->registry.set_gauge(Family::build_info, series_labels(Family::build_info, {}, version), 1);
  impl_->registry.set_gauge(Family::targets_skipped, series_labels(Family::targets_skipped, {}, {}), 0);
}

void Exporter::set_targets_skipped(std::uint64_t count) {
  const std::lock_guard lock(impl_->mutex);
  impl_->registry.set_gauge(Family::targets_skipped, series_labels(Family::targets_skipped, {}, {}), static_cast<double>(count));
}

Exporter::~Exporter() = default;

void Exporter::update(const TargetMetrics& metrics) {
  const std::lock_guard lock(impl_->mutex);
  const auto& k = metrics.kubernetes;
  auto& t = impl_->target(sanitize_label_value(metrics.target),
                          {sanitized(k.namespace_name), sanitized(k.pod), sanitized(k.container)});
  publish_sampling(t, metrics);
  publish_locks(t, metrics.totals);
  publish_latest(t, metrics.latest);
  publish_jvm(t.series(), metrics.perf);
  publish_ring(t.series(), metrics);
}

void Exporter::remove(const std::string& target) {
  const std::lock_guard lock(impl_->mutex);
  const auto it = impl_->targets.find(sanitize_label_value(target));
  if (it == impl_->targets.end()) return;
  it->second.series().remove_all();
  impl_->targets.erase(it);
}

std::string Exporter::render() const {
  const std::lock_guard lock(impl_->mutex);  // never half an update in one scrape
  return impl_->registry.render();
}

}  // namespace lockwatch::exporter
