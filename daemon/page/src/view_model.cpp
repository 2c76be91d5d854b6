// SPDX-License-Identifier: Apache-2.0
// A target's view from the correlator's window and the stacks of its newest dumps.
#include <algorithm>
#include <tuple>

#include "lockwatch/page/view.hpp"

namespace lockwatch::view {
namespace {

// Holders grouped by (site, busy at), as the text report does: a pool's threads take turns
// holding one lock at one place, and that place is the answer, not their names.
std::vector<HolderSite> holder_sites(const analysis::LockSummary& lock) {
  std::map<std::pair<std::string, std::string>, HolderSite> groups;
  std::map<std::pair<std::string, std::string>, std::uint64_t> most;  // the most dumps of one thread
  for (const auto& h : lock.holders) {
    auto& g = groups[{h.site, h.busy_at}];
    g.site = h.site, g.busy_at = h.busy_at;
    g.dumps += h.observations;
    ++g.threads;
    if (auto& m = most[{h.site, h.busy_at}]; h.observations > m) m = h.observations, g.thread = h.thread;
  }
  std::vector<HolderSite> out;
  for (auto& [where, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const HolderSite& a, const HolderSite& b) { return a.dumps > b.dumps; });
  return out;
}

std::uint32_t waiters_in(const std::map<analysis::LockKey, std::uint32_t>& dump, const analysis::LockKey& key) {
  const auto it = dump.find(key);
  return it == dump.end() ? 0 : it->second;
}

HotLock hot_lock(const analysis::LockSummary& l, const Window& w) {
  HotLock h;
  h.key = l.key;
  h.waiters_now = w.waiters.empty() ? 0 : waiters_in(w.waiters.back(), l.key);
  h.max_waiters = l.max_waiters;
  h.wait_observations = l.wait_observations;
  h.dumps_seen = l.dumps_seen;
  h.holders = holder_sites(l);
  h.resolution = l.resolution;
  return h;
}

// The table: locks waited for now first (most waiters), then those of the window (most
// observations). The chart: the most observed of the table's locks, so each line has its row.
std::vector<HotLock> hot_locks(const Window& w, const Limits& limits) {
  std::vector<HotLock> all;
  for (const auto& l : w.report.locks) all.push_back(hot_lock(l, w));  // most observed first
  std::stable_sort(all.begin(), all.end(), [](const HotLock& a, const HotLock& b) {
    return std::tie(b.waiters_now, b.wait_observations) < std::tie(a.waiters_now, a.wait_observations);
  });
  if (all.size() > limits.hot_locks) all.resize(limits.hot_locks);
  return all;
}

WaiterSeries series_of(const Window& w, std::vector<HotLock>& locks, const Limits& limits) {
  WaiterSeries s;
  s.dumps = w.report.dumps.size();
  std::vector<std::size_t> charted(locks.size());
  for (std::size_t i = 0; i < charted.size(); ++i) charted[i] = i;
  std::stable_sort(charted.begin(), charted.end(),
                   [&](std::size_t a, std::size_t b) { return locks[a].wait_observations > locks[b].wait_observations; });
  if (charted.size() > limits.series) charted.resize(limits.series);
  for (std::size_t c = 0; c < charted.size(); ++c) locks[charted[c]].series = c, s.locks.push_back({charted[c], {}});
  if (s.dumps == 0 || limits.points == 0) return s;
  // More dumps than points: each point is a bucket of dumps and shows its largest count, so
  // a spike of one dump stays visible.
  const std::size_t points = std::min(s.dumps, limits.points);
  for (std::size_t p = 0; p < points; ++p) {
    const std::size_t begin = p * s.dumps / points, end = std::max(begin + 1, (p + 1) * s.dumps / points);
    std::uint32_t contending = 0;
    std::vector<std::uint32_t> peak(charted.size(), 0);
    for (std::size_t d = begin; d < end; ++d) {
      contending = std::max(contending, w.report.dumps[d].contending_threads);
      for (std::size_t c = 0; c < charted.size(); ++c) peak[c] = std::max(peak[c], waiters_in(w.waiters[d], locks[charted[c]].key));
    }
    s.times.push_back(w.report.dumps[end - 1].time);
    s.contending.push_back(contending);
    for (std::size_t c = 0; c < charted.size(); ++c) s.locks[c].waiters.push_back(peak[c]);
  }
  return s;
}

}  // namespace

Window window_of(const analysis::Correlator& correlator) {
  Window w;
  w.report = correlator.report();
  w.waiters.reserve(correlator.size());
  for (std::size_t i = 0; i < correlator.size(); ++i) w.waiters.push_back(correlator.tally(i).waiters);
  return w;
}

void StackViews::add(model::ThreadDump dump) {
  const auto graph = analysis::build_lock_graph(dump);
  flame_.add_dump(dump, graph);
  newest_ = std::move(dump);
  ++dumps_;
}

WaitGraph StackViews::graph(const Limits& limits) const {
  if (!newest_) return {};
  return build_wait_graph(*newest_, analysis::build_lock_graph(*newest_), limits);
}

TargetView build_target_view(std::string name, const Window& window, const StackViews& stacks, bool unix_times,
                             const Limits& limits) {
  TargetView v;
  v.name = std::move(name);
  v.unix_times = unix_times;
  const auto& dumps = window.report.dumps;
  v.dumps = dumps.size();
  if (!dumps.empty()) {
    const auto& newest = dumps.back();
    v.first_time = dumps.front().time, v.last_time = newest.time;
    v.threads_now = newest.java_threads;
    v.states_now = newest.states;
    v.virtual_now = newest.virtual_threads;
    v.virtual_states_now = newest.virtual_states;
    v.pinned_now = newest.pinned_carrier_threads;
    v.pinned_carriers_now = newest.pinned_carriers;
    v.lock_fields_now = newest.lock_fields;
    v.contending_now = newest.contending_threads;
    v.deadlocks_now = newest.deadlocks;
  }
  v.synchronizers_listed = std::any_of(dumps.begin(), dumps.end(), [](const auto& d) { return d.synchronizers_listed; });
  v.hot_locks = hot_locks(window, limits);
  v.locks_in_window = window.report.locks.size();
  v.series = series_of(window, v.hot_locks, limits);
  v.graph = stacks.graph(limits);
  v.flame = stacks.flame(limits);
  const auto& stuck = window.report.stuck;
  v.stuck.assign(stuck.begin(), stuck.begin() + static_cast<std::ptrdiff_t>(std::min(stuck.size(), limits.stuck_threads)));
  return v;
}

}  // namespace lockwatch::view
