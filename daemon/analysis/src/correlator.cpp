// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/correlator.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace lockwatch::analysis {
namespace {

DumpSummary summarize(const model::ThreadDump& dump, const LockGraph& g, double time_s) {
  DumpSummary s;
  s.time = time_s;
  s.timestamp = dump.timestamp;
  s.threads = static_cast<std::uint32_t>(dump.threads.size());
  for (const auto& t : dump.threads) {
    if (!t.is_java()) continue;
    ++s.java_threads;
    if (t.state != model::ThreadState::none) ++s.states[t.state];
  }
  s.contending_threads = static_cast<std::uint32_t>(g.waits.size());
  for (const auto& c : g.deadlocks) {
    DeadlockSummary d{{}, c.kinds, c.found_in_graph, c.reported_by_jvm};
    for (auto t : c.threads) d.threads.emplace_back(dump.threads[t].name);
    s.deadlocks.push_back(std::move(d));
  }
  s.pools = group_pools(dump);
  s.complete = dump.stats.complete;
  s.synchronizers_listed = dump.synchronizers_listed;
  s.unknown_lines = dump.stats.unknown_lines;
  return s;
}

void sort_holders(std::vector<HolderCount>& holders) {
  std::sort(holders.begin(), holders.end(), [](const auto& a, const auto& b) {
    return std::tie(b.observations, a.site, a.thread) < std::tie(a.observations, b.site, b.thread);
  });
}

}  // namespace

std::string_view to_string(Resolution r) noexcept {
  switch (r) {
    case Resolution::same_dump: return "same_dump";
    case Resolution::correlated: return "correlated";
    case Resolution::unresolved: return "unresolved";
  }
  return "?";
}

void ResolutionCounts::add(Resolution r) noexcept {
  (r == Resolution::same_dump ? same_dump : r == Resolution::correlated ? correlated : unresolved) += 1;
}

void Correlator::add(const model::ThreadDump& dump, double time_s) {
  const LockGraph g = build_lock_graph(dump);
  Sample s;
  s.summary = summarize(dump, g, time_s);
  auto holder_of = [&](const Held& h) {
    return HolderRef{strings_.intern(dump.threads[h.thread].name), strings_.intern(h.site), strings_.intern(h.busy_at)};
  };
  s.held.reserve(g.held.size());
  for (const auto& h : g.held) s.held.push_back({h.kind, h.address, strings_.intern(h.lock_class), holder_of(h)});
  for (const auto& w : g.waits) {
    const auto& t = dump.threads[w.thread];
    Observation o{{w.kind, strings_.intern(w.lock_class), strings_.intern(w.site)}, w.address,
                  strings_.intern(t.name), t.java_id, {}};
    if (w.held) o.holder = holder_of(g.held[*w.held]);
    s.waits.push_back(o);
  }
  samples_.push_back(std::move(s));
  if (options_.max_samples == 0) return;
  while (samples_.size() > options_.max_samples) samples_.pop_front();
  if (++adds_since_compaction_ >= options_.max_samples) compact();
}

// Interned strings outlive the dumps that brought them (thread names of a churning pool
// would pile up in a daemon): once per window, re-intern what the kept dumps still use.
void Correlator::compact() {
  adds_since_compaction_ = 0;
  StringPool fresh;
  auto keep = [&fresh](std::string_view& v) { v = fresh.intern(v); };
  auto keep_holder = [&keep](HolderRef& h) { keep(h.thread), keep(h.site), keep(h.busy_at); };
  for (auto& s : samples_) {
    for (auto& o : s.waits) {
      keep(o.key.lock_class), keep(o.key.site), keep(o.thread);
      if (o.holder) keep_holder(*o.holder);
    }
    for (auto& h : s.held) keep(h.lock_class), keep_holder(h.holder);
  }
  strings_ = std::move(fresh);
}

// A holder in another dump: the same object (same class and address), or the holder
// that dump found for the same lock key.
std::optional<Correlator::HolderRef> Correlator::find_in(const Sample& s, const Observation& o) const {
  if (o.address)
    for (const auto& h : s.held)
      if (h.kind == o.key.kind && h.address == *o.address && h.lock_class == o.key.lock_class) return h.holder;
  for (const auto& w : s.waits)
    if (w.holder && w.key == o.key) return w.holder;
  return std::nullopt;
}

std::optional<Correlator::HolderRef> Correlator::find_in_neighbours(std::size_t i, const Observation& o) const {
  for (std::size_t d = 1; d <= options_.neighbour_window; ++d) {
    if (i >= d)
      if (auto h = find_in(samples_[i - d], o)) return h;
    if (i + d < samples_.size())
      if (auto h = find_in(samples_[i + d], o)) return h;
  }
  return std::nullopt;
}

template <class Visit>
void Correlator::visit_waits(std::size_t i, Visit&& visit) const {
  for (const auto& o : samples_[i].waits) {
    auto holder = o.holder;
    const Resolution r = holder ? Resolution::same_dump
                                : (holder = find_in_neighbours(i, o)) ? Resolution::correlated : Resolution::unresolved;
    visit(o, holder, r);
  }
}

void Correlator::count_waits(std::map<Key, Tally>& locks, ResolutionCounts& total) const {
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    std::map<Key, std::uint32_t> waiters;
    std::set<std::tuple<Key, std::string_view, std::string_view>> holders_seen;  // once per dump
    visit_waits(i, [&](const Observation& o, const std::optional<HolderRef>& holder, Resolution r) {
      auto& lock = locks[o.key];
      ++lock.summary.wait_observations, ++waiters[o.key];
      lock.summary.resolution.add(r), total.add(r);
      if (holder && holders_seen.insert({o.key, holder->site, holder->thread}).second)
        ++lock.busy[{holder->site, holder->thread}][holder->busy_at];
    });
    for (const auto& [key, n] : waiters) {
      auto& summary = locks[key].summary;
      summary.max_waiters = std::max(summary.max_waiters, n);
      ++summary.dumps_seen;
    }
  }
}

SampleTally Correlator::tally(std::size_t index) const {
  SampleTally t;
  std::set<std::tuple<Key, std::string_view, std::string_view>> holders_seen;
  visit_waits(index, [&](const Observation& o, const std::optional<HolderRef>& holder, Resolution r) {
    ++t.waiters[to_key(o.key)];
    t.resolution.add(r);
    if (holder && holders_seen.insert({o.key, holder->site, holder->thread}).second)
      ++t.holders[{o.key.kind, std::string(o.key.lock_class), std::string(holder->site)}];
  });
  return t;
}

namespace {

// The busiest place of each holder becomes its busy_at.
std::vector<HolderCount> holder_counts(const auto& busy) {
  std::vector<HolderCount> out;
  for (const auto& [holder, places] : busy) {
    const auto& [site, thread] = holder;
    HolderCount count{std::string(site), std::string(thread), 0, {}};
    std::uint64_t most = 0;
    for (const auto& [place, n] : places) {
      count.observations += n;
      if (n > most) most = n, count.busy_at = place;
    }
    out.push_back(std::move(count));
  }
  return out;
}

}  // namespace

std::vector<StuckThread> Correlator::stuck_threads() const {
  // A thread is its #id when printed (never reused in a JVM), else its name.
  using Identity = std::pair<std::optional<std::uint64_t>, std::string_view>;
  auto identity = [](const Observation& o) { return o.java_id ? Identity{o.java_id, {}} : Identity{std::nullopt, o.thread}; };
  std::map<Identity, std::pair<Key, std::uint32_t>> current;  // the run each thread is in
  std::map<std::pair<Identity, Key>, std::pair<const Observation*, std::uint32_t>> longest;
  for (const auto& s : samples_) {
    std::map<Identity, std::pair<Key, std::uint32_t>> next;
    for (const auto& o : s.waits) {
      const auto id = identity(o);
      auto it = current.find(id);
      const std::uint32_t run = (it != current.end() && it->second.first == o.key ? it->second.second : 0) + 1;
      auto& best = longest[{id, o.key}];
      if (run > best.second) best = {&o, run};
      next[id] = {o.key, run};
    }
    current = std::move(next);
  }
  std::vector<StuckThread> out;
  for (const auto& [key, best] : longest)
    if (best.second >= options_.stuck_samples)
      out.push_back({std::string(best.first->thread), best.first->java_id, to_key(best.first->key), best.second});
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.samples > b.samples; });
  return out;
}

SequenceReport Correlator::report() const {
  SequenceReport r;
  for (const auto& s : samples_) r.dumps.push_back(s.summary);
  std::map<Key, Tally> locks;
  count_waits(locks, r.resolution);
  for (auto& [key, tally] : locks) {
    tally.summary.key = to_key(key);
    tally.summary.holders = holder_counts(tally.busy);
    sort_holders(tally.summary.holders);
    r.locks.push_back(std::move(tally.summary));
  }
  std::stable_sort(r.locks.begin(), r.locks.end(), [](const auto& a, const auto& b) {
    return std::tie(b.wait_observations, b.max_waiters) < std::tie(a.wait_observations, a.max_waiters);
  });
  r.stuck = stuck_threads();
  return r;
}

}  // namespace lockwatch::analysis
