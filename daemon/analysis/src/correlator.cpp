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

// The thread's identity across dumps: #id when printed (never reused in a JVM), else its name.
std::string identity(const std::optional<std::uint64_t>& java_id, const std::string& name) {
  return java_id ? "#" + std::to_string(*java_id) : "name:" + name;
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
  for (const auto& h : g.held) {
    const auto& t = dump.threads[h.thread];
    s.held.push_back({h.kind, h.address, std::string(h.lock_class),
                      {std::string(t.name), std::string(h.site), std::string(h.busy_at)}});
  }
  for (const auto& w : g.waits) {
    const auto& t = dump.threads[w.thread];
    Observation o{{w.kind, std::string(w.lock_class), std::string(w.site)}, w.address, std::string(t.name), t.java_id, {}};
    if (w.holder) {
      auto h = std::find_if(g.held.begin(), g.held.end(), [&](const Held& x) {
        return x.thread == *w.holder && x.kind == w.kind && x.address == w.address;
      });
      o.holder = HolderRef{std::string(dump.threads[*w.holder].name), std::string(h->site), std::string(h->busy_at)};
    }
    s.waits.push_back(std::move(o));
  }
  samples_.push_back(std::move(s));
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

void Correlator::count_waits(std::map<LockKey, LockSummary>& locks, ResolutionCounts& total) const {
  // (lock, holder site, holder thread) -> where the holder was busy -> dumps
  std::map<std::tuple<LockKey, std::string, std::string>, std::map<std::string, std::uint64_t>> busy;
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    std::map<LockKey, std::uint32_t> waiters;
    std::set<std::tuple<LockKey, std::string, std::string>> holders_seen;  // once per dump
    for (const auto& o : samples_[i].waits) {
      auto& lock = locks[o.key];
      lock.key = o.key;
      ++lock.wait_observations, ++waiters[o.key];
      auto holder = o.holder;
      const Resolution r = holder ? Resolution::same_dump
                                  : (holder = find_in_neighbours(i, o)) ? Resolution::correlated : Resolution::unresolved;
      lock.resolution.add(r), total.add(r);
      if (holder && holders_seen.insert({o.key, holder->site, holder->thread}).second)
        ++busy[{o.key, holder->site, holder->thread}][holder->busy_at];
    }
    for (const auto& [key, n] : waiters) {
      locks[key].max_waiters = std::max(locks[key].max_waiters, n);
      ++locks[key].dumps_seen;
    }
  }
  for (const auto& [holder, places] : busy) {
    const auto& [key, site, thread] = holder;
    HolderCount count{site, thread, 0, {}};
    std::uint64_t most = 0;
    for (const auto& [place, n] : places) {
      count.observations += n;
      if (n > most) most = n, count.busy_at = place;
    }
    locks[key].holders.push_back(std::move(count));
  }
}

std::vector<StuckThread> Correlator::stuck_threads() const {
  std::map<std::string, StuckThread> current;        // identity -> its current run
  std::map<std::pair<std::string, LockKey>, StuckThread> longest;
  for (const auto& s : samples_) {
    std::map<std::string, StuckThread> next;
    for (const auto& o : s.waits) {
      const auto id = identity(o.java_id, o.thread);
      auto run = current.count(id) && current[id].lock == o.key ? current[id] : StuckThread{o.thread, o.java_id, o.key, 0};
      ++run.samples;
      auto& best = longest[{id, o.key}];
      if (run.samples > best.samples) best = run;
      next[id] = run;
    }
    current = std::move(next);
  }
  std::vector<StuckThread> out;
  for (auto& [key, run] : longest)
    if (run.samples >= options_.stuck_samples) out.push_back(run);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.samples > b.samples; });
  return out;
}

SequenceReport Correlator::report() const {
  SequenceReport r;
  for (const auto& s : samples_) r.dumps.push_back(s.summary);
  std::map<LockKey, LockSummary> locks;
  count_waits(locks, r.resolution);
  for (auto& [key, lock] : locks) {
    sort_holders(lock.holders);
    r.locks.push_back(std::move(lock));
  }
  std::stable_sort(r.locks.begin(), r.locks.end(), [](const auto& a, const auto& b) {
    return std::tie(b.wait_observations, b.max_waiters) < std::tie(a.wait_observations, a.max_waiters);
  });
  r.stuck = stuck_threads();
  return r;
}

}  // namespace lockwatch::analysis
