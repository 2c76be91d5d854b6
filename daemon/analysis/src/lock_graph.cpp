// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/lock_graph.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "lockwatch/analysis/sites.hpp"

namespace lockwatch::analysis {
namespace {

using model::LockAction;
using model::LockRef;
using model::ThreadInfo;

struct WaitLine {
  const LockRef* ref = nullptr;
  LockKind kind = LockKind::monitor;
  bool contends = false;  // false: the thread waits, but not to acquire a lock (Object.wait)
};

// The first wait line from the top of the stack says what the thread waits for.
std::optional<WaitLine> wait_line(const ThreadInfo& t) {
  for (const auto& ref : t.locks) {
    switch (ref.action) {
      case LockAction::waiting_to_lock: return WaitLine{&ref, LockKind::monitor, true};
      // JDK 9-11 also print re-lock on the caller frames of a WAITING thread: only a
      // BLOCKED thread is really re-entering the monitor.
      case LockAction::waiting_to_relock: return WaitLine{&ref, LockKind::monitor, t.state == model::ThreadState::blocked};
      case LockAction::parking:
        return WaitLine{&ref, LockKind::park, ref.address.has_value() && !is_idle_blocker(ref.class_name)};
      case LockAction::waiting_on:
      case LockAction::class_init_wait: return WaitLine{&ref, LockKind::monitor, false};
      case LockAction::locked:
      case LockAction::eliminated: break;
    }
  }
  return std::nullopt;
}

std::string_view wait_site(const ThreadInfo& t, const WaitLine& w) {
  if (w.kind == LockKind::park) return site_from(t, 0);
  // Monitors: the frame that printed "waiting to lock" is the synchronized code itself
  // (e.g. java.security.Provider.getService), even inside the JDK; a re-lock sits in
  // Object.wait, so its site is the caller.
  if (w.ref->action == LockAction::waiting_to_relock) return site_from(t, w.ref->frame);
  return w.ref->frame < t.frames.size() ? model::frame_method(t.frames[w.ref->frame].text) : std::string_view{};
}

// Monitors held: "- locked <X>" except the X it waits on (a waiter prints "locked <X>"
// under its wait/re-lock line). Re-entrant locks repeat: keep the outermost frame, i.e. the
// last line for an address. Sorting keeps this O(n log n) in a thread's lock lines (a
// hostile dump may print 200 000 of them in one thread).
void collect_monitors(std::uint32_t index, const ThreadInfo& t, const std::optional<WaitLine>& w,
                      std::vector<Held>& out) {
  const bool waits_on_object = w && w->ref->address;
  const std::uint64_t waited = waits_on_object ? *w->ref->address : 0;
  const std::size_t first = out.size();
  for (const auto& ref : t.locks) {
    if (ref.action != LockAction::locked || !ref.address) continue;
    if (waits_on_object && *ref.address == waited) continue;
    const auto site = ref.frame < t.frames.size() ? model::frame_method(t.frames[ref.frame].text) : std::string_view{};
    out.push_back(Held{index, LockKind::monitor, *ref.address, ref.class_name, site, site_from(t, 0)});
  }
  const auto begin = out.begin() + static_cast<std::ptrdiff_t>(first);
  std::stable_sort(begin, out.end(), [](const Held& a, const Held& b) { return a.address < b.address; });
  // Of equal addresses keep the last (outermost) one: move it to the front of its run.
  auto kept = begin;
  for (auto it = begin; it != out.end();) {
    auto run_end = std::find_if(it, out.end(), [&](const Held& h) { return h.address != it->address; });
    *kept++ = *(run_end - 1);
    it = run_end;
  }
  out.erase(kept, out.end());
}

void collect_synchronizers(std::uint32_t index, const ThreadInfo& t, std::vector<Held>& out) {
  for (const auto& s : t.owned_synchronizers)
    out.push_back(Held{index, LockKind::park, s.address, s.class_name, site_from(t, 0), site_from(t, 0)});
}

// (kind, address) -> index into LockGraph::held, sorted for binary search. Held locks are
// collected thread by thread, so among duplicates the lowest index is the lowest thread.
using HolderIndex = std::vector<std::tuple<LockKind, std::uint64_t, std::uint32_t>>;

std::optional<std::uint32_t> held_lock(const HolderIndex& index, LockKind kind, std::uint64_t address) {
  auto it = std::lower_bound(index.begin(), index.end(), std::tuple{kind, address, std::uint32_t{0}});
  if (it == index.end() || std::get<0>(*it) != kind || std::get<1>(*it) != address) return std::nullopt;
  return std::get<2>(*it);
}

std::vector<std::optional<std::uint32_t>> next_hops(const LockGraph& g, std::size_t threads) {
  std::vector<std::optional<std::uint32_t>> next(threads);
  for (const auto& w : g.waits) next[w.thread] = w.holder;
  return next;
}

// Each thread waits for at most one lock, so the graph is functional: follow the
// chain from every thread and report each cycle once, rotated to its lowest index.
std::vector<Cycle> find_cycles(const LockGraph& g, std::size_t threads) {
  const auto next = next_hops(g, threads);
  std::vector<std::uint8_t> color(threads, 0);  // 0 new, 1 on the current path, 2 done
  std::vector<Cycle> cycles;
  for (std::uint32_t start = 0; start < threads; ++start) {
    std::vector<std::uint32_t> path;
    std::optional<std::uint32_t> at = start;
    while (at && color[*at] == 0) color[*at] = 1, path.push_back(*at), at = next[*at];
    if (at && color[*at] == 1) {
      Cycle c;
      c.found_in_graph = true;
      auto from = std::find(path.begin(), path.end(), *at);
      c.threads.assign(from, path.end());
      std::rotate(c.threads.begin(), std::min_element(c.threads.begin(), c.threads.end()), c.threads.end());
      cycles.push_back(std::move(c));
    }
    for (auto p : path) color[p] = 2;
  }
  return cycles;
}

// The names of a set of threads, sorted: equal sets compare equal.
std::vector<std::string_view> names_of(const model::ThreadDump& dump, const std::vector<std::uint32_t>& threads) {
  std::vector<std::string_view> names;
  for (auto t : threads) names.push_back(dump.threads[t].name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// HotSpot's own deadlock reports, merged with the cycles found in the graph. Indexed by
// name and by name set, so a dump with thousands of threads and reports stays O(n log n).
void merge_jvm_reports(const model::ThreadDump& dump, std::vector<Cycle>& cycles) {
  if (dump.jvm_deadlocks.empty()) return;
  std::map<std::string_view, std::uint32_t> java_thread;  // the first Java thread of each name
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i)
    if (dump.threads[i].is_java()) java_thread.try_emplace(dump.threads[i].name, i);
  std::map<std::vector<std::string_view>, std::vector<std::size_t>> by_names;  // unreported cycles, in order
  for (std::size_t c = 0; c < cycles.size(); ++c) by_names[names_of(dump, cycles[c].threads)].push_back(c);
  std::vector<Cycle> extra;
  for (const auto& report : dump.jvm_deadlocks) {
    std::vector<std::string_view> names(report.threads.begin(), report.threads.end());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    // Names are not unique (two "DeadlockThread-A" in two cycles): each cycle takes one report.
    if (auto it = by_names.find(names); it != by_names.end() && !it->second.empty()) {
      cycles[it->second.front()].reported_by_jvm = true;
      it->second.erase(it->second.begin());
      continue;
    }
    Cycle c;
    c.reported_by_jvm = true;
    for (auto name : report.threads)
      if (auto t = java_thread.find(name); t != java_thread.end()) c.threads.push_back(t->second);
    extra.push_back(std::move(c));
  }
  for (auto& c : extra) cycles.push_back(std::move(c));
}

void fill_kinds(const LockGraph& g, std::size_t threads, std::vector<Cycle>& cycles) {
  std::vector<LockKind> kind(threads, LockKind::monitor);
  for (const auto& w : g.waits) kind[w.thread] = w.kind;
  for (auto& c : cycles)
    for (auto t : c.threads) c.kinds.push_back(kind[t]);
}

}  // namespace

std::string_view to_string(LockKind kind) noexcept { return kind == LockKind::park ? "park" : "monitor"; }

LockGraph build_lock_graph(const model::ThreadDump& dump) {
  LockGraph g;
  std::vector<std::optional<WaitLine>> lines(dump.threads.size());
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i) {
    const auto& t = dump.threads[i];
    lines[i] = wait_line(t);
    collect_monitors(i, t, lines[i], g.held);
    collect_synchronizers(i, t, g.held);
  }
  HolderIndex holders;
  holders.reserve(g.held.size());
  for (std::uint32_t k = 0; k < g.held.size(); ++k) holders.emplace_back(g.held[k].kind, g.held[k].address, k);
  std::sort(holders.begin(), holders.end());
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i) {
    if (!lines[i] || !lines[i]->contends) continue;
    const auto& w = *lines[i];
    Wait wait{i, w.kind, w.ref->address, w.ref->class_name, wait_site(dump.threads[i], w), std::nullopt, std::nullopt};
    if (auto k = w.ref->address ? held_lock(holders, w.kind, *w.ref->address) : std::nullopt; k && g.held[*k].thread != i)
      wait.holder = g.held[*k].thread, wait.held = k;
    g.waits.push_back(wait);
  }
  g.deadlocks = find_cycles(g, dump.threads.size());
  merge_jvm_reports(dump, g.deadlocks);
  fill_kinds(g, dump.threads.size(), g.deadlocks);
  return g;
}

}  // namespace lockwatch::analysis
