// SPDX-License-Identifier: Apache-2.0
// Exporter: turns each TargetMetrics into bounded, sanitized series, snapshots them on the
// sampler's side and publishes the finished text for scrapes to concatenate.
#include "lockwatch/exporter/exporter.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "lockwatch/exporter/label_slots.hpp"
#include "lockwatch/exporter/label_values.hpp"
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

// One target's series together with the top-K slot state that bounds its families: what the
// exporter remembers of a target between updates, on the sampler's side only.
class BoundedTargetSeries {
 public:
  BoundedTargetSeries(const std::string& target, const KubernetesLabels& where, std::size_t k)
      : series_(target, where), k_(k) {}

  void count_bounded(Family f, const Totals& totals) { series_.count(f, as_values(slots(f).assign(totals))); }
  void show_bounded(Family f, const Totals& values) { series_.show(f, as_values(cap_gauges(values, k_, fold_rule(f)))); }
  // Totals kept as integers (microseconds) and exported in another unit (seconds).
  void count_scaled(Family f, const Totals& totals, double scale) {
    Values values;
    for (const auto& [labels, n] : slots(f).assign(totals)) values.emplace(labels, static_cast<double>(n) * scale);
    series_.count(f, values);
  }
  void show_max(Family f, const std::map<LockLabels, double>& values) { series_.show(f, cap_max(values, k_, fold_rule(f))); }
  TargetSeries& series() { return series_; }
  const KubernetesLabels& where() const { return series_.current().where; }

 private:
  StickySlots& slots(Family f) { return slots_.try_emplace(f, k_, fold_rule(f)).first->second; }

  TargetSeries series_;
  std::size_t k_;
  std::map<Family, StickySlots> slots_;
};

void record_sampling(BoundedTargetSeries& t, const TargetMetrics& m, const std::vector<double>& duration_buckets) {
  t.count_bounded(Family::samples, named_rows(m.totals.samples));
  t.count_bounded(Family::samples_by_form, named_rows(m.totals.samples_by_form));
  t.series().observe(Family::sample_duration, m.new_durations, duration_buckets);
  t.series().show(Family::target_up, single(m.up ? 1 : 0));
  t.series().show(Family::last_sample_timestamp, if_present(m.last_sample_time));
  t.series().count(Family::missed_ticks, single(m.totals.missed_ticks));
}

void record_locks(BoundedTargetSeries& t, const TargetTotals& totals) {
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
void record_latest(BoundedTargetSeries& t, const std::optional<LatestSample>& latest) {
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
void record_jvm(TargetSeries& s, const JvmPerf& perf) {
  s.count(Family::jvm_contended_enters, if_present(perf.contended_enters));
  s.count(Family::jvm_parks, if_present(perf.parks));
  s.count(Family::jvm_safepoint_seconds, if_present(perf.safepoint_seconds));
  s.show(Family::jvm_threads_live, if_present(perf.threads_live));
}

void record_ring(TargetSeries& s, const TargetMetrics& m) {
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

// What a scrape prints: the daemon-wide part, then each target's by sanitized label (the
// order the exposition lists series in). Immutable once published; the next one shares
// every part that did not change.
struct Exposition {
  std::shared_ptr<const RenderedPart> daemon;
  std::map<std::string, std::shared_ptr<const RenderedPart>> targets;
};

}  // namespace

struct Exporter::Impl {
  explicit Impl(ExporterOptions o) : options(std::move(o)) {}

  // A target whose Kubernetes labels became known (or changed) gets new series: the old ones
  // go, and its counters start again from its totals under the new label set.
  BoundedTargetSeries& target(const std::string& label, const KubernetesLabels& where) {
    if (auto it = targets.find(label); it != targets.end() && it->second.where() != where) targets.erase(it);
    return targets.try_emplace(label, label, where, options.top_k).first->second;
  }

  // Callers serialize their part first, outside any lock a scrape takes: a scrape waits for
  // this pointer swap only. The old exposition is freed after the lock is let go.
  void publish() {
    auto next = std::make_shared<const Exposition>(building);
    {
      const std::lock_guard lock(published_mutex);
      published.swap(next);
    }
  }

  std::shared_ptr<const Exposition> current() const {
    const std::lock_guard lock(published_mutex);
    return published;
  }

  const ExporterOptions options;

  // The sampler's side: update(), remove() and set_targets_skipped() hold `update_mutex`
  // (against each other only; render() never takes it) for all their work.
  std::mutex update_mutex;
  std::map<std::string, BoundedTargetSeries> targets;  // by sanitized target label
  TargetSnapshot daemon;                               // build_info, targets_skipped
  Exposition building;                                 // the parts as of the latest change

  // The scrape's side: held only to copy or swap one pointer.
  mutable std::mutex published_mutex;
  std::shared_ptr<const Exposition> published;
};

Exporter::Exporter(ExporterOptions options) : impl_(std::make_unique<Impl>(checked(std::move(options)))) {
  auto& d = impl_->daemon;
  d.of(Family::build_info) = {{LabelValues{sanitize_label_value(impl_->options.version)}, 1}};
  d.of(Family::targets_skipped) = single(0);
  impl_->building.daemon = std::make_shared<const RenderedPart>(d);
  impl_->publish();
}

Exporter::~Exporter() = default;

void Exporter::set_targets_skipped(std::uint64_t count) {
  const std::lock_guard lock(impl_->update_mutex);
  impl_->daemon.of(Family::targets_skipped) = single(count);
  impl_->building.daemon = std::make_shared<const RenderedPart>(impl_->daemon, impl_->building.daemon.get());
  impl_->publish();
}

void Exporter::update(const TargetMetrics& metrics) {
  const std::lock_guard lock(impl_->update_mutex);
  const auto& k = metrics.kubernetes;
  const auto label = sanitize_label_value(metrics.target);
  auto& t = impl_->target(label, {sanitized(k.namespace_name), sanitized(k.pod), sanitized(k.container)});
  record_sampling(t, metrics, impl_->options.duration_buckets);
  record_locks(t, metrics.totals);
  record_latest(t, metrics.latest);
  record_jvm(t.series(), metrics.perf);
  record_ring(t.series(), metrics);
  auto& part = impl_->building.targets[label];
  part = std::make_shared<const RenderedPart>(t.series().current(), part.get());
  impl_->publish();
}

void Exporter::remove(const std::string& target) {
  const std::lock_guard lock(impl_->update_mutex);
  const auto label = sanitize_label_value(target);
  if (impl_->targets.erase(label) == 0) return;
  impl_->building.targets.erase(label);
  impl_->publish();
}

std::string Exporter::render() const {
  const auto exposition = impl_->current();  // one published state: never half an update
  std::vector<const RenderedPart*> parts{exposition->daemon.get()};
  for (const auto& [_, part] : exposition->targets) parts.push_back(part.get());
  return render_exposition(parts);
}

}  // namespace lockwatch::exporter
