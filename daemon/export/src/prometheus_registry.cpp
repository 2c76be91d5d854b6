// SPDX-License-Identifier: Apache-2.0
// PrometheusRegistry over prometheus-cpp: the only file that includes it.
#include "prometheus_registry.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <variant>

namespace lockwatch::exporter {
namespace {

using AnyFamily = std::variant<prometheus::Family<prometheus::Counter>*, prometheus::Family<prometheus::Gauge>*,
                               prometheus::Family<prometheus::Histogram>*>;

AnyFamily build(const FamilySpec& s, prometheus::Registry& registry) {
  const std::string name(s.name), help(s.help);
  switch (s.type) {
    case MetricType::counter: return &prometheus::BuildCounter().Name(name).Help(help).Register(registry);
    case MetricType::gauge: return &prometheus::BuildGauge().Name(name).Help(help).Register(registry);
    case MetricType::histogram: return &prometheus::BuildHistogram().Name(name).Help(help).Register(registry);
  }
  throw std::logic_error("unknown metric type");
}

std::string_view target_of(const prometheus::ClientMetric& m) {
  for (const auto& l : m.label)
    if (l.name == "target") return l.value;
  return {};
}

// prometheus-cpp keeps series in a hash map; scrapes and golden files want a fixed order.
void sort_for_output(std::vector<prometheus::MetricFamily>& families) {
  std::sort(families.begin(), families.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& f : families)
    std::sort(f.metric.begin(), f.metric.end(), [](const auto& a, const auto& b) {
      return std::forward_as_tuple(target_of(a), a.label) < std::forward_as_tuple(target_of(b), b.label);
    });
}

}  // namespace

struct PrometheusRegistry::Impl {
  prometheus::Registry registry;
  std::array<AnyFamily, family_count> families;
  prometheus::Histogram::BucketBoundaries buckets;

  template <class T>
  prometheus::Family<T>& family(Family f) { return *std::get<prometheus::Family<T>*>(families[static_cast<std::size_t>(f)]); }
};

PrometheusRegistry::PrometheusRegistry(std::vector<double> duration_buckets) : impl_(std::make_unique<Impl>()) {
  impl_->buckets = std::move(duration_buckets);
  for (const auto& s : catalog()) impl_->families[static_cast<std::size_t>(s.family)] = build(s, impl_->registry);
}

PrometheusRegistry::~PrometheusRegistry() = default;

void PrometheusRegistry::set_gauge(Family f, const SeriesLabels& labels, double value) {
  impl_->family<prometheus::Gauge>(f).Add(labels).Set(value);
}

void PrometheusRegistry::add_counter(Family f, const SeriesLabels& labels, double delta) {
  impl_->family<prometheus::Counter>(f).Add(labels).Increment(delta);
}

void PrometheusRegistry::observe(Family f, const SeriesLabels& labels, const std::vector<double>& values) {
  auto& histogram = impl_->family<prometheus::Histogram>(f).Add(labels, impl_->buckets);
  for (double v : values) histogram.Observe(v);
}

void PrometheusRegistry::remove(Family f, const SeriesLabels& labels) {
  std::visit(
      [&](auto* family) {
        if (!family->Has(labels)) return;
        if constexpr (std::is_same_v<decltype(family), prometheus::Family<prometheus::Histogram>*>)
          family->Remove(&family->Add(labels, impl_->buckets));  // Add returns the existing series
        else
          family->Remove(&family->Add(labels));
      },
      impl_->families[static_cast<std::size_t>(f)]);
}

std::string PrometheusRegistry::render() const {
  auto families = impl_->registry.Collect();
  sort_for_output(families);
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace lockwatch::exporter
