// SPDX-License-Identifier: Apache-2.0
// Snapshots through prometheus-cpp's Collectable and TextSerializer: the only file that
// includes prometheus-cpp.
#include "prometheus_registry.hpp"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace lockwatch::exporter {
namespace {

prometheus::MetricType type_of(MetricType t) {
  switch (t) {
    case MetricType::counter: return prometheus::MetricType::Counter;
    case MetricType::gauge: return prometheus::MetricType::Gauge;
    case MetricType::histogram: return prometheus::MetricType::Histogram;
  }
  throw std::logic_error("unknown metric type");
}

prometheus::MetricFamily empty_family(const FamilySpec& s) { return {std::string(s.name), std::string(s.help), type_of(s.type), {}}; }

// Serialize takes a vector: the family is moved into one, never copied with all its series.
std::string serialized(prometheus::MetricFamily family) {
  std::vector<prometheus::MetricFamily> one;
  one.push_back(std::move(family));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, one);
  return out.str();
}

// "# HELP ...\n# TYPE ...\n" of each family, exactly as the serializer writes them before
// its samples: a part's lines are the serializer's output with this cut off.
const std::array<std::string, family_count>& headers() {
  static const auto texts = [] {
    std::array<std::string, family_count> out;
    for (const auto& s : catalog()) out[static_cast<std::size_t>(s.family)] = serialized(empty_family(s));
    return out;
  }();
  return texts;
}

// The exposition lists families by name, which is not the catalog's order.
const std::array<Family, family_count>& by_name() {
  static const auto order = [] {
    std::array<Family, family_count> out;
    for (const auto& s : catalog()) out[static_cast<std::size_t>(s.family)] = s.family;
    std::sort(out.begin(), out.end(), [](Family a, Family b) { return spec(a).name < spec(b).name; });
    return out;
  }();
  return order;
}

Family family_named(std::string_view name) {
  static const auto families = [] {
    std::map<std::string_view, Family> out;
    for (const auto& s : catalog()) out.emplace(s.name, s.family);
    return out;
  }();
  return families.at(name);
}

prometheus::ClientMetric metric_with(const SeriesLabels& labels) {
  prometheus::ClientMetric m;
  for (const auto& [name, value] : labels) m.label.push_back({name, value});  // by name: the map's order
  return m;
}

prometheus::ClientMetric::Histogram histogram_of(const HistogramValues& h) {
  prometheus::ClientMetric::Histogram out;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    cumulative += h.counts[i];
    const double bound = i < h.upper_bounds.size() ? h.upper_bounds[i] : std::numeric_limits<double>::infinity();
    out.bucket.push_back({cumulative, bound});
  }
  out.sample_count = cumulative;
  out.sample_sum = h.sum;
  return out;
}

// Same series, same values: the text serialized for `a` is the text of `b`.
bool same_series(Family f, const TargetSnapshot& a, const TargetSnapshot& b) {
  if (a.target != b.target || a.where != b.where || a.of(f) != b.of(f)) return false;
  const auto ha = a.histograms.find(f), hb = b.histograms.find(f);
  if (ha == a.histograms.end() || hb == b.histograms.end()) return (ha == a.histograms.end()) == (hb == b.histograms.end());
  return ha->second == hb->second;
}

// The families of one snapshot as prometheus-cpp sees a registry's: each with its series
// sorted by labels, so equal snapshots collect (and print) equal. `wanted` limits it to the
// families that need serializing.
class SnapshotCollectable final : public prometheus::Collectable {
 public:
  SnapshotCollectable(const TargetSnapshot& snapshot, const std::array<bool, family_count>& wanted)
      : s_(snapshot), wanted_(wanted) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> families;
    for (const auto& spec : catalog()) {
      if (!wanted_[static_cast<std::size_t>(spec.family)]) continue;
      auto family = empty_family(spec);
      add_series(spec, family.metric);
      if (family.metric.empty()) continue;  // as prometheus-cpp's own families: no series, no HELP
      std::sort(family.metric.begin(), family.metric.end(), [](const auto& a, const auto& b) { return a.label < b.label; });
      families.push_back(std::move(family));
    }
    return families;
  }

 private:
  void add_series(const FamilySpec& spec, std::vector<prometheus::ClientMetric>& out) const {
    const auto labels = [&](const LabelValues& values) { return series_labels(spec.family, s_.target, values, s_.where); };
    if (spec.type == MetricType::histogram) {
      if (const auto it = s_.histograms.find(spec.family); it != s_.histograms.end()) {
        auto m = metric_with(labels({}));
        m.histogram = histogram_of(it->second);
        out.push_back(std::move(m));
      }
      return;
    }
    for (const auto& [values, value] : s_.of(spec.family)) {
      auto m = metric_with(labels(values));
      (spec.type == MetricType::counter ? m.counter.value : m.gauge.value) = value;
      out.push_back(std::move(m));
    }
  }

  const TargetSnapshot& s_;
  const std::array<bool, family_count>& wanted_;
};

}  // namespace

RenderedPart::RenderedPart(TargetSnapshot snapshot, const RenderedPart* previous) : snapshot_(std::move(snapshot)) {
  std::array<bool, family_count> changed{};
  for (const auto& s : catalog()) {
    const auto i = static_cast<std::size_t>(s.family);
    changed[i] = previous == nullptr || !same_series(s.family, snapshot_, previous->snapshot_);
    if (!changed[i]) lines_[i] = previous->lines_[i];
  }
  for (auto& family : SnapshotCollectable(snapshot_, changed).Collect()) {
    const auto f = family_named(family.name);
    const auto& header = headers()[static_cast<std::size_t>(f)];
    auto text = serialized(std::move(family));
    // The header is the same for every part; render_exposition writes it once per family.
    if (text.compare(0, header.size(), header) != 0) throw std::logic_error("unexpected exposition header");
    text.erase(0, header.size());
    lines_[static_cast<std::size_t>(f)] = std::move(text);
  }
}

std::string render_exposition(const std::vector<const RenderedPart*>& parts) {
  std::size_t size = 0;
  for (const auto f : by_name()) {
    size += headers()[static_cast<std::size_t>(f)].size();
    for (const auto* p : parts) size += p->lines(f).size();
  }
  std::string out;
  out.reserve(size);
  for (const auto f : by_name()) {
    const bool shown = std::any_of(parts.begin(), parts.end(), [f](const auto* p) { return !p->lines(f).empty(); });
    if (!shown) continue;
    out += headers()[static_cast<std::size_t>(f)];
    for (const auto* p : parts) out += p->lines(f);
  }
  return out;
}

}  // namespace lockwatch::exporter
