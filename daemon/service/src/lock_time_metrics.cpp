// SPDX-License-Identifier: Apache-2.0
// What each sample adds to the time families: wait seconds and CPU as running totals, the
// holds in progress as gauges of the latest sample.
#include <cmath>

#include "lockwatch/exporter/label_slots.hpp"
#include "lockwatch/service/target_state.hpp"

namespace lockwatch::service {
namespace {

exporter::LockLabels labels_of(const analysis::LockKey& key) {
  return {std::string(analysis::to_string(key.kind)), key.lock_class, key.site};
}

// Totals are kept in whole microseconds: the exporter's top-K slots rank integer totals, and a
// microsecond is far below what a sample can tell.
std::uint64_t micros(double seconds) {
  return seconds > 0 && std::isfinite(seconds) ? static_cast<std::uint64_t>(std::llround(seconds * 1e6)) : 0;
}

constexpr std::size_t max_cpu_names = 1024;

}  // namespace

// Called for every successful sample after the correlator has it, with the graph it got.
void TargetState::count_lock_time(const model::ThreadDump& dump, const analysis::LockGraph& graph, double time_s) {
  const auto sample = lock_time_.add(dump, graph, time_s, gc_epoch_);
  auto& totals = metrics_.totals;
  for (const auto& [key, seconds] : sample.wait_seconds) totals.wait_microseconds[labels_of(key)] += micros(seconds);
  for (const auto& [key, n] : sample.activity)
    totals.holder_activity[{std::string(analysis::to_string(key.kind)), key.lock_class,
                            std::string(analysis::to_string(key.activity))}] += n;
  for (const auto& [pool, seconds] : sample.pool_cpu_seconds) {
    // Threads outside a pool count under their own names: uniquely named ones (a request id)
    // would grow the totals for the life of the target, so past a bound they go to "other".
    auto& cpu = totals.pool_cpu_microseconds;
    const bool known = cpu.contains(pool) || cpu.size() < max_cpu_names;
    cpu[known ? pool : std::string(exporter::other_label_value)] += micros(seconds);
  }
  if (!metrics_.latest) return;
  for (const auto& hold : sample.holds) {
    auto& max = metrics_.latest->lock_hold_seconds_max[labels_of(hold.key)];
    max = std::max(max, hold.seconds);
  }
}

}  // namespace lockwatch::service
