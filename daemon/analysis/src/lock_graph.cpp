// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/lock_graph.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "lockwatch/analysis/sites.hpp"

namespace lockwatch::analysis {
namespace {

using model::LockAction;
using model::LockRef;
using model::ThreadInfo;

bool is_jdk_class_loading(std::string_view method) {
  return is_jdk_frame(method) && (method.ends_with(".loadClass") || method.ends_with(".loadClassOrNull"));
}

struct WaitLine {
  const LockRef* ref = nullptr;
  LockKind kind = LockKind::monitor;
  bool contends = false;  // false: the thread waits, but not to acquire anything (Object.wait, an idle worker)
};

WaitLine park_line(const ThreadInfo& t, const LockRef& ref) {
  if (!ref.address) return {&ref, LockKind::park, false};
  switch (classify_park(t, ref.class_name)) {
    case ParkWait::lock: return {&ref, LockKind::park, true};
    case ParkWait::resource: return {&ref, LockKind::resource, true};
    case ParkWait::idle: break;
  }
  return {&ref, LockKind::park, false};
}

// The first wait line from the top of the stack says what the thread waits for.
std::optional<WaitLine> wait_line(const ThreadInfo& t) {
  const bool blocked = t.state == model::ThreadState::blocked;
  for (const auto& ref : t.locks) {
    switch (ref.action) {
      case LockAction::waiting_to_lock: return WaitLine{&ref, LockKind::monitor, true};
      // JDK 9-11 also print re-lock on the caller frames of a WAITING thread: only a
      // BLOCKED thread is really re-entering the monitor.
      case LockAction::waiting_to_relock: return WaitLine{&ref, LockKind::monitor, blocked};
      case LockAction::parking: return park_line(t, ref);
      // JDK <= 8 print a notified thread re-entering the monitor as "- waiting on <A>" in
      // state BLOCKED: it waits to acquire A.
      case LockAction::waiting_on: return WaitLine{&ref, LockKind::monitor, blocked};
      case LockAction::class_init_wait: return WaitLine{&ref, LockKind::monitor, false};
      case LockAction::locked:
      case LockAction::eliminated: break;
    }
  }
  return std::nullopt;
}

std::string_view wait_site(const ThreadInfo& t, const WaitLine& w) {
  if (w.kind != LockKind::monitor) return site_from(t, 0);
  // Monitors: the frame that printed "waiting to lock" is the synchronized code itself
  // (e.g. java.security.Provider.getService), even inside the JDK; a re-lock (or a JDK 8
  // "waiting on" while BLOCKED) sits in Object.wait, so its site is the caller.
  if (w.ref->action == LockAction::waiting_to_relock || w.ref->action == LockAction::waiting_on)
    return site_from(t, w.ref->frame);
  const auto method = w.ref->frame < t.frames.size() ? model::frame_method(t.frames[w.ref->frame].text) : std::string_view{};
  // Class loading waits in the JDK's ClassLoader.loadClass for every loader: the code that
  // loads is the answer, the same site as for the waiters the dump prints without a line.
  if (is_jdk_class_loading(method)) return first_non_jdk_frame(t);
  return method;
}

std::string_view wait_class(const ThreadInfo& t, const WaitLine& w) {
  return w.kind == LockKind::resource ? resource_class(t, w.ref->class_name) : w.ref->class_name;
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

// A j.u.c. lock does not say where it was taken: until the waiters tell (take_site_from_waiters),
// the holder's site is its first frame outside the JDK, never the JDK frame it happens to be
// in (FileOutputStream.writeBytes under logback's appender lock). Where it is now is busy_at.
void collect_synchronizers(std::uint32_t index, const ThreadInfo& t, std::vector<Held>& out) {
  for (const auto& s : t.owned_synchronizers)
    out.push_back(Held{index, LockKind::park, s.address, s.class_name, first_non_jdk_frame(t), site_from(t, 0)});
}

bool has_frame(const ThreadInfo& t, std::string_view method) {
  return std::any_of(t.frames.begin(), t.frames.end(), [&](const auto& f) { return model::frame_method(f.text) == method; });
}

// The code where waiters wait for a j.u.c. lock is where its holder took it, when that
// code is in the holder's stack (logback's OutputStreamAppender.subAppend): the holder
// site is then the same for every holder of that lock, wherever each is busy.
void take_site_from_waiters(const model::ThreadDump& dump, LockGraph& g) {
  for (const auto& w : g.waits)
    if (w.kind == LockKind::park && w.held && !w.site.empty() && has_frame(dump.threads[g.held[*w.held].thread], w.site))
      g.held[*w.held].site = w.site;
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
  std::vector<std::uint32_t> path;  // reused: one allocation, not one per thread
  for (std::uint32_t start = 0; start < threads; ++start) {
    path.clear();
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

std::vector<std::string_view> sorted_unique(std::vector<std::string_view> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// The names of a set of threads, sorted: equal sets compare equal.
std::vector<std::string_view> names_of(const model::ThreadDump& dump, const std::vector<std::uint32_t>& threads) {
  std::vector<std::string_view> names;
  for (auto t : threads) names.push_back(dump.threads[t].name);
  return sorted_unique(std::move(names));
}


// HotSpot's own deadlock reports, merged with the cycles found in the graph. A report lists
// the chain the JVM walked, which may begin with threads that only wait on the cycle: a
// report whose names include all of a cycle's is that cycle (one deadlock, the cycle's
// threads), not a second one. Indexed by name, so thousands of threads and reports stay
// O(n log n).
void merge_jvm_reports(const model::ThreadDump& dump, std::vector<Cycle>& cycles) {
  if (dump.jvm_deadlocks.empty()) return;
  std::map<std::string_view, std::uint32_t> java_thread;  // the first Java thread of each name
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i)
    if (dump.threads[i].is_java()) java_thread.try_emplace(dump.threads[i].name, i);
  std::vector<std::vector<std::string_view>> cycle_names;
  std::map<std::string_view, std::vector<std::size_t>> cycles_of;  // name -> graph cycles with it
  for (std::size_t c = 0; c < cycles.size(); ++c) {
    cycle_names.push_back(names_of(dump, cycles[c].threads));
    for (auto name : cycle_names.back()) cycles_of[name].push_back(c);
  }
  std::vector<Cycle> extra;
  for (const auto& report : dump.jvm_deadlocks) {
    const auto names = sorted_unique({report.threads.begin(), report.threads.end()});
    // Names are not unique (two "DeadlockThread-A" in two cycles): each cycle takes one
    // report; an equal set first, then one the report contains.
    std::optional<std::size_t> match;
    for (auto name : names) {
      auto it = cycles_of.find(name);
      if (it == cycles_of.end()) continue;
      for (auto c : it->second) {
        if (cycles[c].reported_by_jvm) continue;
        if (!std::includes(names.begin(), names.end(), cycle_names[c].begin(), cycle_names[c].end())) continue;
        if (!match || cycle_names[c].size() > cycle_names[*match].size()) match = c;
      }
    }
    if (match) {
      cycles[*match].reported_by_jvm = true;
      continue;
    }
    Cycle c;
    c.reported_by_jvm = true;
    for (auto name : report.threads) {
      if (auto t = java_thread.find(name); t != java_thread.end()) c.threads.push_back(t->second);
      else c.missing.push_back(name);  // the thread's entry is not in the dump: keep its name
    }
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

// Class loading through a loader that is not parallel capable takes the loader's monitor
// inside the VM (Class.forName0, ClassLoader.loadClass): its waiters are BLOCKED without a
// "waiting to lock" line (JDK 17 and 25).
bool in_class_loading(const ThreadInfo& t) {
  const std::size_t n = std::min<std::size_t>(t.frames.size(), 12);
  for (std::size_t i = 0; i < n; ++i) {
    const auto m = model::frame_method(t.frames[i].text);
    if (m == "java.lang.Class.forName0" || m.ends_with(".loadClass") || m.ends_with(".loadClassOrNull") ||
        m == "java.lang.ClassLoader.loadClassInternal")
      return true;
  }
  return false;
}

// The monitor a class-loading holder took: "- locked <X> (a SomeLoader)" on a loadClass
// frame. Only when every such monitor in the dump is of one class can a waiter be
// attributed to it; the holder is named only when one thread holds it.
struct LoaderLock {
  std::string_view lock_class;
  std::optional<std::uint32_t> held;  // index into LockGraph::held
};

std::optional<LoaderLock> loader_lock(const LockGraph& g) {
  std::optional<LoaderLock> found;
  for (std::uint32_t k = 0; k < g.held.size(); ++k) {
    const auto& h = g.held[k];
    if (h.kind != LockKind::monitor || !(h.site.ends_with(".loadClass") || h.site.ends_with(".loadClassOrNull"))) continue;
    if (!found) found = LoaderLock{h.lock_class, k};
    else if (found->lock_class != h.lock_class) return std::nullopt;  // two loader classes: cannot tell which
    else if (g.held[*found->held].thread != h.thread) found->held.reset();  // two holders: class known, holder not
  }
  return found;
}

// Threads holding a monitor that another thread of the dump waits to lock. Such a thread
// printed BLOCKED has just acquired it (HotSpot's state lags the lock; the field report of
// 842 threads on Provider.getService shows it): it is the holder, not a waiter.
std::set<std::uint32_t> holders_of_contended(const LockGraph& g) {
  std::set<std::uint64_t> waited;
  for (const auto& w : g.waits)
    if (w.kind == LockKind::monitor && w.address) waited.insert(*w.address);
  std::set<std::uint32_t> out;
  for (const auto& h : g.held)
    if (h.kind == LockKind::monitor && waited.count(h.address)) out.insert(h.thread);
  return out;
}

// "- locked" on the top frame of a BLOCKED thread: it has just taken that monitor (the
// state lags), so it holds, it does not wait (ShortHolds' holders, JDK 17 and 25).
bool holds_at_top(const ThreadInfo& t) {
  return std::any_of(t.locks.begin(), t.locks.end(), [](const LockRef& r) { return r.action == LockAction::locked && r.frame == 0; });
}

// A BLOCKED thread is never dropped: without a wait line it waits for a monitor the dump
// does not name - counted with its site and, where the dump allows, attributed.
void add_unnamed_blocked(const model::ThreadDump& dump, const std::vector<std::optional<WaitLine>>& lines, LockGraph& g) {
  const auto loader = loader_lock(g);
  const auto holders = holders_of_contended(g);
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i) {
    const auto& t = dump.threads[i];
    if (t.state != model::ThreadState::blocked || (lines[i] && lines[i]->contends) || t.frames.empty()) continue;
    if (holders.count(i) || holds_at_top(t)) continue;
    Wait wait{i, LockKind::monitor, std::nullopt, unnamed_lock_class, model::frame_method(t.frames[0].text), std::nullopt, std::nullopt};
    if (in_class_loading(t)) {
      wait.site = first_non_jdk_frame(t);
      if (loader) wait.lock_class = loader->lock_class;
      if (loader && loader->held && g.held[*loader->held].thread != i) wait.holder = g.held[*loader->held].thread, wait.held = loader->held;
    }
    g.waits.push_back(wait);
  }
}

}  // namespace

std::string_view to_string(LockKind kind) noexcept {
  switch (kind) {
    case LockKind::monitor: return "monitor";
    case LockKind::park: return "park";
    case LockKind::resource: return "resource";
  }
  return "monitor";
}

namespace {

struct KeyView {
  LockKind kind;
  std::string_view lock_class;
  std::string_view site;
  bool operator==(const KeyView&) const = default;
};

struct KeyViewHash {
  std::size_t operator()(const KeyView& k) const noexcept {
    const std::size_t h = std::hash<std::string_view>{}(k.lock_class) * 31 + std::hash<std::string_view>{}(k.site);
    return h * 4 + static_cast<std::size_t>(k.kind);
  }
};

// The same views, not only equal text: the waits of one lock mostly share their strings (a
// parsed body's, for all its threads), and telling that costs no hash.
bool same_views(const KeyView& a, const KeyView& b) {
  return a.kind == b.kind && a.lock_class.data() == b.lock_class.data() && a.lock_class.size() == b.lock_class.size() &&
         a.site.data() == b.site.data() && a.site.size() == b.site.size();
}

}  // namespace

WaitGroups group_waits_by_key(const LockGraph& graph) {
  std::unordered_map<KeyView, std::uint32_t, KeyViewHash> ids;
  std::array<std::pair<KeyView, std::uint32_t>, 4> recent{};  // the last keys looked up, tried by address first
  std::size_t recent_used = 0;
  std::vector<std::uint32_t> group(graph.waits.size());
  std::vector<std::uint32_t> count;
  for (std::size_t i = 0; i < graph.waits.size(); ++i) {
    const auto& w = graph.waits[i];
    const KeyView key{w.kind, w.lock_class, w.site};
    const auto seen = std::find_if(recent.begin(), recent.begin() + static_cast<std::ptrdiff_t>(recent_used),
                                   [&](const auto& r) { return same_views(r.first, key); });
    if (seen != recent.begin() + static_cast<std::ptrdiff_t>(recent_used)) {
      group[i] = seen->second;
    } else {
      auto [it, added] = ids.try_emplace(key, static_cast<std::uint32_t>(count.size()));
      if (added) count.push_back(0);
      group[i] = it->second;
      std::move_backward(recent.begin(), recent.end() - 1, recent.end());  // the oldest goes
      recent[0] = {key, it->second};
      recent_used = std::min(recent_used + 1, recent.size());
    }
    ++count[group[i]];
  }
  WaitGroups out;
  out.begin.assign(count.size() + 1, 0);
  for (std::size_t k = 0; k < count.size(); ++k) out.begin[k + 1] = out.begin[k] + count[k];
  out.waits.resize(graph.waits.size());
  std::vector<std::uint32_t> next(out.begin.begin(), out.begin.end() - 1);
  for (std::size_t i = 0; i < graph.waits.size(); ++i) out.waits[next[group[i]]++] = static_cast<std::uint32_t>(i);
  return out;
}

namespace {

// What the graph reads from a thread's body (its state, frames and locks) alone. Threads of
// one parsed body (ThreadInfo::body_id) have equal bodies, so these are worked out for the
// first of them and shared: a dump of a thousand threads has a few dozen bodies. The views
// and the wait line's lock point into that first thread's body, equal to any other's.
struct BodyFacts {
  std::optional<WaitLine> line;
  std::string_view lock_class;  // of a contending line: wait_class
  std::string_view site;        // of a contending line: wait_site
  std::vector<Held> monitors;   // collect_monitors, with thread 0
};

BodyFacts facts_of(const ThreadInfo& t) {
  BodyFacts f;
  f.line = wait_line(t);
  if (f.line && f.line->contends) f.lock_class = wait_class(t, *f.line), f.site = wait_site(t, *f.line);
  collect_monitors(0, t, f.line, f.monitors);
  return f;
}

// The facts of each body of one dump, once; threads without a body have their own.
class BodyFactsMemo {
 public:
  const BodyFacts& of(const ThreadInfo& t) {
    if (t.body_id == 0) return facts_.emplace_back(facts_of(t));
    auto [it, fresh] = by_body_.try_emplace(t.body_id, nullptr);
    if (fresh) it->second = &facts_.emplace_back(facts_of(t));
    return *it->second;
  }

 private:
  std::deque<BodyFacts> facts_;  // a deque: references stay valid as it grows
  std::unordered_map<std::uint64_t, const BodyFacts*> by_body_;
};

}  // namespace

LockGraph build_lock_graph(const model::ThreadDump& dump) {
  LockGraph g;
  BodyFactsMemo memo;
  std::vector<const BodyFacts*> facts(dump.threads.size());
  std::vector<std::optional<WaitLine>> lines(dump.threads.size());
  std::size_t most_waits = 0;  // threads with a wait line or BLOCKED: a bound on the waits
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i) {
    const auto& t = dump.threads[i];
    facts[i] = &memo.of(t);
    lines[i] = facts[i]->line;
    if ((lines[i] && lines[i]->contends) || t.state == model::ThreadState::blocked) ++most_waits;
    for (const auto& h : facts[i]->monitors) g.held.push_back(h), g.held.back().thread = i;
    collect_synchronizers(i, t, g.held);
  }
  g.waits.reserve(most_waits);  // hundreds of waiters would otherwise move the vector ten times
  HolderIndex holders;
  holders.reserve(g.held.size());
  for (std::uint32_t k = 0; k < g.held.size(); ++k) holders.emplace_back(g.held[k].kind, g.held[k].address, k);
  std::sort(holders.begin(), holders.end());
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i) {
    if (!lines[i] || !lines[i]->contends) continue;
    const auto& w = *lines[i];
    Wait wait{i, w.kind, w.ref->address, facts[i]->lock_class, facts[i]->site, std::nullopt, std::nullopt};
    if (w.kind == LockKind::resource) {  // nobody holds a latch or a pool's condition
      g.waits.push_back(wait);
      continue;
    }
    if (auto k = w.ref->address ? held_lock(holders, w.kind, *w.ref->address) : std::nullopt; k && g.held[*k].thread != i)
      wait.holder = g.held[*k].thread, wait.held = k;
    g.waits.push_back(wait);
  }
  add_unnamed_blocked(dump, lines, g);
  take_site_from_waiters(dump, g);
  g.deadlocks = find_cycles(g, dump.threads.size());
  merge_jvm_reports(dump, g.deadlocks);
  fill_kinds(g, dump.threads.size(), g.deadlocks);
  return g;
}

}  // namespace lockwatch::analysis
