// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/correlator.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "lockwatch/analysis/sites.hpp"
#include "lockwatch/analysis/virtual_threads.hpp"

namespace lockwatch::analysis {
namespace {

// Pinned carriers are counted whole but named only up to `named`: a dump of 100 000 virtual
// threads must not make every sample in the window hold thousands of strings.
void summarize_virtual(const model::ThreadDump& dump, std::uint32_t named, DumpSummary& s) {
  s.virtual_states = virtual_thread_states(dump);
  for (const auto& [state, n] : s.virtual_states) s.virtual_threads += n;
  const auto pinned = find_pinned_carriers(dump);
  s.pinned_carrier_threads = static_cast<std::uint32_t>(pinned.size());
  for (std::size_t i = 0; i < pinned.size() && i < named; ++i) {
    const auto& p = pinned[i];
    s.pinned_carriers.push_back({std::string(dump.threads[p.carrier].name), p.virtual_thread,
                                 std::string(site_from(dump.threads[p.site_thread], p.site_frame))});
  }
}

// Thread.dump_to_file of JDK 21-24 (JSON and plain) prints names and stacks only.
bool prints_states(const model::ThreadDump& dump) {
  if (dump.format == model::DumpFormat::jstack) return true;
  return std::any_of(dump.threads.begin(), dump.threads.end(), [](const auto& t) { return t.state != model::ThreadState::none; });
}

DumpSummary summarize(const model::ThreadDump& dump, const LockGraph& g, double time_s, std::uint32_t named) {
  DumpSummary s;
  s.time = time_s;
  s.timestamp = dump.timestamp;
  s.format = dump.format;
  s.lock_fields = prints_states(dump);
  s.threads = static_cast<std::uint32_t>(dump.threads.size());
  std::array<std::uint32_t, 8> states{};  // counted here, put in the map once: a map step per thread cost more
  static_assert(static_cast<std::size_t>(model::ThreadState::unknown) < states.size());
  for (const auto& t : dump.threads) {
    if (!t.is_java()) continue;
    ++s.java_threads;
    // Virtual threads have their own count: lockwatch_threads stays the platform threads, the
    // same set a Thread.print sample of the JVM lists.
    if (!t.is_virtual && t.state != model::ThreadState::none) ++states[static_cast<std::size_t>(t.state)];
  }
  for (std::size_t state = 0; state < states.size(); ++state)
    if (states[state] != 0) s.states.emplace(static_cast<model::ThreadState>(state), states[state]);
  summarize_virtual(dump, named, s);
  s.contending_threads = static_cast<std::uint32_t>(g.waits.size());
  for (const auto& c : g.deadlocks) {
    DeadlockSummary d{{}, c.kinds, c.found_in_graph, c.reported_by_jvm};
    for (auto t : c.threads) d.threads.emplace_back(dump.threads[t].name);
    for (auto name : c.missing) d.threads.emplace_back(name);
    s.deadlocks.push_back(std::move(d));
  }
  s.pools = group_pools(dump);
  // Waits are in thread order, so a pool's waiters mostly follow one another: a waiter of
  // the last waiter's pool needs no lookup.
  PoolNamer namer;
  auto it = s.waiting_by_pool.end();
  for (const auto& w : g.waits) {
    const auto& t = dump.threads[w.thread];
    bool same = false;
    const std::string* pool = namer.pool(t.name, same);
    if (pool == nullptr) continue;
    if (it == s.waiting_by_pool.end() || !same) it = s.waiting_by_pool.try_emplace(*pool).first;
    ++it->second[t.state];
  }
  s.complete = dump.stats.complete;
  s.synchronizers_listed = dump.synchronizers_listed;
  s.unknown_lines = dump.stats.unknown_lines;
  return s;
}

// Interned views of equal strings are the same view: their addresses tell strings apart.
std::uintptr_t address_of(std::string_view interned) { return reinterpret_cast<std::uintptr_t>(interned.data()); }

// A holder counted once per lock key and dump: (key id, interned site, interned thread).
struct SeenHolder {
  std::uint32_t key = 0;
  std::uintptr_t site = 0;
  std::uintptr_t thread = 0;
  bool operator==(const SeenHolder&) const = default;
};
struct SeenHolderHash {
  std::size_t operator()(const SeenHolder& h) const noexcept {
    const std::uint64_t x = (h.site * 0x9E3779B97F4A7C15ull) ^ (h.thread * 0xBF58476D1CE4E5B9ull) ^ h.key;
    return static_cast<std::size_t>(x ^ (x >> 31));
  }
};

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
    case Resolution::inferred: return "inferred";
  }
  return "?";
}

void ResolutionCounts::add(Resolution r) noexcept {
  (r == Resolution::same_dump    ? same_dump
   : r == Resolution::correlated ? correlated
   : r == Resolution::inferred   ? inferred
                                 : unresolved) += 1;
}

Correlator::Id Correlator::Tables::name(std::string_view text) {
  auto it = name_ids.find(text);
  if (it != name_ids.end()) return it->second;
  const auto view = strings.intern(text);
  names.push_back(view);
  return name_ids.emplace(view, static_cast<Id>(names.size() - 1)).first->second;
}

Correlator::Id Correlator::Tables::key(LockKind kind, std::string_view lock_class, std::string_view site) {
  // Ids first: name() may grow `names`, which would leave a reference taken before it dangling.
  const Id class_id = name(lock_class), site_id = name(site);
  return key(kind, class_id, site_id);
}

Correlator::Id Correlator::Tables::key(LockKind kind, Id class_id, Id site_id) {
  auto [it, added] = key_ids.try_emplace(IdTriple{static_cast<Id>(kind), class_id, site_id}, static_cast<Id>(keys.size()));
  if (added) keys.push_back(Key{kind, names[class_id], names[site_id]});
  return it->second;
}

Correlator::Id Correlator::Tables::holder(std::string_view thread, std::string_view site, std::string_view busy_at) {
  const Id thread_id = name(thread), site_id = name(site), busy_id = name(busy_at);
  return holder(thread_id, site_id, busy_id);
}

Correlator::Id Correlator::Tables::holder(Id thread_id, Id site_id, Id busy_id) {
  auto [it, added] = holder_ids.try_emplace(IdTriple{thread_id, site_id, busy_id}, static_cast<Id>(holders.size()));
  if (added) holders.push_back(HolderRef{names[thread_id], names[site_id], names[busy_id]});
  return it->second;
}

Correlator::Id Correlator::ViewIds::name(Tables& tables, std::string_view view) {
  auto [it, added] = ids.try_emplace({view.data(), view.size()}, 0);
  if (added) it->second = tables.name(view);
  return it->second;
}

Correlator::Id Correlator::thread_name(const model::ThreadDump& dump, std::uint32_t index) {
  const auto name = dump.threads[index].name;
  if (index < thread_names_.size() && thread_names_[index] != none && tables_.names[thread_names_[index]] == name)
    return thread_names_[index];
  const Id id = tables_.name(name);
  if (index < thread_names_.size()) thread_names_[index] = id;
  return id;
}

namespace {

std::uint32_t small_id(const std::optional<std::uint64_t>& id) {
  return id && *id < 0xFFFF'FFFFu ? static_cast<std::uint32_t>(*id) : 0xFFFF'FFFFu;
}

}  // namespace

void Correlator::add(const model::ThreadDump& dump, double time_s) { add(dump, build_lock_graph(dump), time_s); }

void Correlator::add(const model::ThreadDump& dump, const LockGraph& g, double time_s) {
  Sample s;
  s.summary = summarize(dump, g, time_s, options_.named_waiters);
  // The last dump's views: their addresses may be this one's strings now. Dropped, not
  // cleared, so a huge dump's table does not stay.
  view_ids_.ids = {};
  thread_names_.resize(dump.threads.size(), none);
  if (thread_names_.capacity() > 2 * thread_names_.size() + 1024) thread_names_.shrink_to_fit();  // one dump's worth
  // The holder of each held lock, interned once: hundreds of waiters may share one.
  std::vector<Id> held_holder(g.held.size());
  s.held.reserve(g.held.size());
  for (std::size_t i = 0; i < g.held.size(); ++i) {
    const auto& h = g.held[i];
    held_holder[i] = tables_.holder(thread_name(dump, h.thread), view_ids_.name(tables_, h.site), view_ids_.name(tables_, h.busy_at));
    s.held.push_back({h.address, view_ids_.name(tables_, h.lock_class), held_holder[i], h.kind});
  }
  s.waits.reserve(g.waits.size());
  for (const auto& w : g.waits) {
    const auto& t = dump.threads[w.thread];
    const Id key = tables_.key(w.kind, view_ids_.name(tables_, w.lock_class), view_ids_.name(tables_, w.site));
    s.waits.push_back({w.address.value_or(0), key, thread_name(dump, w.thread), w.held ? held_holder[*w.held] : none, small_id(t.java_id)});
    if (t.is_virtual && s.waits.back().java_id != none) s.virtual_waiters.push_back(s.waits.back().java_id);
  }
  std::sort(s.virtual_waiters.begin(), s.virtual_waiters.end());
  add_inferred_and_chains(dump, g, s);
  index(s);
  s.bytes = bytes_of(s);
  sample_bytes_ += s.bytes;
  samples_.push_back(std::move(s));
  if (options_.max_samples != 0)
    while (samples_.size() > options_.max_samples) sample_bytes_ -= samples_.front().bytes, samples_.pop_front();
  evict_for_bytes();
  const auto window = options_.max_samples != 0 ? options_.max_samples : (options_.max_bytes != 0 ? samples_.size() : 0);
  if (window != 0 && ++adds_since_compaction_ >= window) compact();
}

// Lookups from other dumps are binary searches, so resolving every waiter of a dump with
// thousands of them stays O(n log n) instead of a scan per waiter.
void Correlator::index(Sample& s) const {
  std::stable_sort(s.held.begin(), s.held.end(),
                   [](const HeldLock& a, const HeldLock& b) { return std::tie(a.kind, a.address) < std::tie(b.kind, b.address); });
  for (const auto& w : s.waits)
    if (w.holder != none) s.key_holder.emplace_back(w.key, w.holder);
  std::stable_sort(s.key_holder.begin(), s.key_holder.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  s.key_holder.erase(std::unique(s.key_holder.begin(), s.key_holder.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
                     s.key_holder.end());
  s.held.shrink_to_fit();
  s.waits.shrink_to_fit();
  s.key_holder.shrink_to_fit();
  s.virtual_waiters.shrink_to_fit();
  s.inferred.shrink_to_fit();
  s.transitive.shrink_to_fit();
}

std::size_t Correlator::bytes_of(const Sample& s) {
  std::size_t n = sizeof(Sample) + s.waits.capacity() * sizeof(Observation) + s.held.capacity() * sizeof(HeldLock) +
                  s.key_holder.capacity() * sizeof(std::pair<Id, Id>) + s.virtual_waiters.capacity() * sizeof(std::uint32_t) +
                  (s.inferred.capacity() + s.transitive.capacity()) * sizeof(std::pair<std::uint32_t, Id>);
  const auto& d = s.summary;
  n += d.timestamp.capacity() + d.states.size() * 48;
  for (const auto& dl : d.deadlocks) {
    n += sizeof(dl) + dl.kinds.capacity();
    for (const auto& t : dl.threads) n += sizeof(t) + t.capacity();
  }
  for (const auto& p : d.pools) n += sizeof(p) + p.pool.capacity() + p.states.size() * 48;
  n += d.virtual_states.size() * 48;
  for (const auto& p : d.pinned_carriers) n += sizeof(p) + p.carrier.capacity() + p.site.capacity();
  for (const auto& c : d.chains)
    for (const auto& k : c.locks) n += sizeof(k) + k.lock_class.capacity() + k.site.capacity();
  return n;
}

// Strings, and the map and vector entries that refer to them (a rough per-entry cost).
std::size_t Correlator::table_bytes() const noexcept {
  return tables_.strings.bytes() + tables_.strings.size() * 64 + tables_.names.size() * 64 + tables_.keys.size() * 96 +
         tables_.holders.size() * 112 + site_lines_.bytes();
}

void Correlator::evict_for_bytes() {
  if (options_.max_bytes == 0) return;
  for (int pass = 0; pass < 2 && bytes() > options_.max_bytes; ++pass) {
    while (samples_.size() > 1 && bytes() > options_.max_bytes) {
      sample_bytes_ -= samples_.front().bytes;
      samples_.pop_front();
      ++evictions_;
    }
    // The tables still hold what the dropped dumps brought: rebuild them once, then look again.
    if (pass == 0 && table_bytes() > options_.max_bytes / 2) compact();
  }
}

// Interned values outlive the dumps that brought them (thread names of a churning pool
// would pile up in a daemon): once per window, rebuild the tables from the kept dumps.
void Correlator::compact() {
  adds_since_compaction_ = 0;
  thread_names_.clear();  // ids of the old tables
  Tables fresh;
  // Each old id is looked up in the fresh tables once, then translated by index: a window
  // of hundreds of dumps repeats the same keys, names and holders thousands of times.
  std::vector<Id> name_map(tables_.names.size(), none), key_map(tables_.keys.size(), none),
      holder_map(tables_.holders.size(), none);
  auto name = [&](Id id) {
    Id& to = name_map[id];
    if (to == none) to = fresh.name(tables_.names[id]);
    return to;
  };
  auto key = [&](Id id) {
    Id& to = key_map[id];
    if (to == none) {
      const auto& k = tables_.keys[id];
      to = fresh.key(k.kind, k.lock_class, k.site);
    }
    return to;
  };
  auto holder = [&](Id id) {
    if (id == none) return none;
    Id& to = holder_map[id];
    if (to == none) {
      const auto& h = tables_.holders[id];
      to = fresh.holder(h.thread, h.site, h.busy_at);
    }
    return to;
  };
  for (auto& s : samples_) {
    for (auto& o : s.waits) o.key = key(o.key), o.thread = name(o.thread), o.holder = holder(o.holder);
    for (auto& h : s.held) h.lock_class = name(h.lock_class), h.holder = holder(h.holder);
    for (auto& [wait, h] : s.inferred) h = holder(h);
    for (auto& [k, n] : s.transitive) k = key(k);
    for (auto& [k, h] : s.key_holder) k = key(k), h = holder(h);
    std::sort(s.key_holder.begin(), s.key_holder.end());
  }
  tables_ = std::move(fresh);
}

// A holder in another dump: the same object (same class and address), or the holder
// that dump found for the same lock key.
std::optional<Correlator::HolderRef> Correlator::find_in(const Sample& s, const Observation& o, bool same_addresses) const {
  const auto& key = key_of(o);
  if (o.address && same_addresses) {
    auto it = std::lower_bound(s.held.begin(), s.held.end(), std::pair{key.kind, o.address}, [](const HeldLock& h, const auto& v) {
      return std::tie(h.kind, h.address) < std::tie(v.first, v.second);
    });
    for (; it != s.held.end() && it->kind == key.kind && it->address == o.address; ++it)
      if (tables_.names[it->lock_class] == key.lock_class) return holder_of(it->holder);
  }
  auto it = std::lower_bound(s.key_holder.begin(), s.key_holder.end(), o.key,
                             [](const std::pair<Id, Id>& kh, Id k) { return kh.first < k; });
  if (it != s.key_holder.end() && it->first == o.key) return holder_of(it->second);
  return std::nullopt;
}

namespace {

// A text dump prints object addresses, dump_to_file identity hashes: numbers of two samples
// name the same object only when both come from the same form.
bool prints_hashes(model::DumpFormat f) { return f != model::DumpFormat::jstack; }

// Thread.print lists platform threads only: such a sample says nothing about virtual threads.
bool lists_virtual(model::DumpFormat f) { return f != model::DumpFormat::jstack; }

}  // namespace

std::optional<Correlator::HolderRef> Correlator::find_in_neighbours(std::size_t i, const Observation& o) const {
  const bool hashes = prints_hashes(samples_[i].summary.format);
  auto look = [&](std::size_t j) { return find_in(samples_[j], o, prints_hashes(samples_[j].summary.format) == hashes); };
  for (std::size_t d = 1; d <= options_.neighbour_window; ++d) {
    if (i >= d)
      if (auto h = look(i - d)) return h;
    if (i + d < samples_.size())
      if (auto h = look(i + d)) return h;
  }
  return std::nullopt;
}

template <class Visit>
void Correlator::visit_waits(std::size_t i, Visit&& visit) const {
  const auto& sample = samples_[i];
  // What the neighbours say depends on the lock key and address alone, and the waiters of
  // one lock come together by the hundred: the last lookup's answer is reused.
  std::optional<std::pair<Id, std::uint64_t>> looked_up;
  std::optional<HolderRef> in_neighbours;
  auto neighbours = [&](const Observation& o) {
    if (!looked_up || looked_up->first != o.key || looked_up->second != o.address)
      looked_up = {o.key, o.address}, in_neighbours = find_in_neighbours(i, o);
    return in_neighbours;
  };
  for (std::size_t w = 0; w < sample.waits.size(); ++w) {
    const auto& o = sample.waits[w];
    if (key_of(o).kind == LockKind::resource) {  // nobody holds a resource: nothing to resolve
      visit(o, std::nullopt, std::nullopt);
      continue;
    }
    auto holder = holder_of(o.holder);
    // A holder another dump shows is evidence; an inferred one only a likely guess.
    const Resolution r = holder                                  ? Resolution::same_dump
                         : (holder = neighbours(o))              ? Resolution::correlated
                         : (holder = inferred_holder(sample, w)) ? Resolution::inferred
                                                                 : Resolution::unresolved;
    visit(o, holder, std::optional(r));
  }
}

void Correlator::count_waits(std::unordered_map<Id, Tally>& locks, ResolutionCounts& total) const {
  const std::size_t first_named = samples_.size() > options_.named_dumps ? samples_.size() - options_.named_dumps : 0;
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    std::unordered_map<Id, LockInDump> in_dump;
    // (key, holder site, holder thread) once per dump: interned, so addresses tell strings apart.
    std::unordered_set<SeenHolder, SeenHolderHash> holders_seen;
    visit_waits(i, [&](const Observation& o, const std::optional<HolderRef>& holder, std::optional<Resolution> r) {
      auto& lock = locks[o.key];
      auto& here = in_dump[o.key];
      ++lock.summary.wait_observations;
      if (here.waiters.size() < options_.named_waiters) here.waiters.emplace_back(tables_.names[o.thread]);
      else ++here.more_waiters;
      if (r) lock.summary.resolution.add(*r), total.add(*r);
      if (holder && holders_seen.insert({o.key, address_of(holder->site), address_of(holder->thread)}).second) {
        ++lock.busy[{holder->site, holder->thread}][holder->busy_at];
        if (here.holders.size() < options_.named_waiters) here.holders.emplace_back(holder->thread);
      }
    });
    for (auto& [key, here] : in_dump) {
      auto& summary = locks[key].summary;
      const auto n = static_cast<std::uint32_t>(here.waiters.size()) + here.more_waiters;
      summary.max_waiters = std::max(summary.max_waiters, n);
      ++summary.dumps_seen;
      if (i < first_named) continue;
      here.dump = i;
      summary.per_dump.push_back(std::move(here));
    }
  }
}

SampleTally Correlator::tally(std::size_t index) const {
  SampleTally t;
  // Counted by interned key first: a LockKey (two strings) is built once per lock, not once
  // per waiter. Holders count once per (key, site, thread); interned views of equal strings
  // are the same view, so their addresses tell them apart.
  std::unordered_map<Id, std::uint32_t> waiters;
  // (key, site address, thread address, site): the site's text comes with its address.
  using Seen = std::tuple<Id, std::uintptr_t, std::uintptr_t, std::string_view>;
  auto same = [](const Seen& a, const Seen& b) {
    return std::get<0>(a) == std::get<0>(b) && std::get<1>(a) == std::get<1>(b) && std::get<2>(a) == std::get<2>(b);
  };
  std::vector<Seen> holders;
  visit_waits(index, [&](const Observation& o, const std::optional<HolderRef>& holder, std::optional<Resolution> r) {
    ++waiters[o.key];
    if (r) t.resolution.add(*r);
    if (!holder) return;
    Seen seen{o.key, address_of(holder->site), address_of(holder->thread), holder->site};
    if (holders.empty() || !same(holders.back(), seen)) holders.push_back(seen);  // waiters of one holder come in runs
  });
  for (const auto& [key, n] : waiters) t.waiters[to_key(tables_.keys[key])] += n;
  // By the numbers alone: equal addresses are equal sites, so the texts need no compare.
  std::sort(holders.begin(), holders.end(), [](const Seen& a, const Seen& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) < std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  });
  holders.erase(std::unique(holders.begin(), holders.end(), same), holders.end());
  for (const auto& [key, site_at, thread_at, site] : holders) {
    const auto& k = tables_.keys[key];
    ++t.holders[{k.kind, std::string(k.lock_class), std::string(site)}];
  }
  for (const auto& [key, n] : samples_[index].transitive) t.transitive[to_key(tables_.keys[key])] = n;
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
  // A thread is its #id when printed (never reused in a JVM), else its name; both as one
  // number here (names are interned ids), so no string is compared per wait.
  auto identity = [](const Observation& o) {
    return o.java_id != none ? (std::uint64_t{1} << 32) | o.java_id : std::uint64_t{o.thread};
  };
  struct Run {
    Id key = 0;
    std::uint32_t samples = 0;
  };
  struct Best {
    const Observation* at = nullptr;
    std::uint32_t samples = 0;
  };
  struct PairHash {
    std::size_t operator()(const std::pair<std::uint64_t, Id>& p) const noexcept {
      const std::uint64_t x = (p.first * 0x9E3779B97F4A7C15ull) ^ p.second;
      return static_cast<std::size_t>(x ^ (x >> 29));
    }
  };
  std::unordered_map<std::uint64_t, Run> current;  // the run each thread is in
  std::unordered_map<std::pair<std::uint64_t, Id>, Best, PairHash> longest;
  std::unordered_set<std::uint64_t> virtual_ids;  // threads seen waiting as virtual threads
  for (const auto& s : samples_) {
    std::unordered_map<std::uint64_t, Run> next;
    for (const auto& o : s.waits) {
      const auto id = identity(o);
      auto it = current.find(id);
      const std::uint32_t run = (it != current.end() && it->second.key == o.key ? it->second.samples : 0) + 1;
      auto& best = longest[{id, o.key}];
      if (run > best.samples) best = {&o, run};
      next[id] = {o.key, run};
      if (std::binary_search(s.virtual_waiters.begin(), s.virtual_waiters.end(), o.java_id)) virtual_ids.insert(id);
    }
    // A text sample between JSON samples cannot see virtual threads: it neither extends nor
    // breaks their runs (JSON and Thread.print samples of one target may alternate).
    if (!lists_virtual(s.summary.format))
      for (const auto& [id, run] : current)
        if (virtual_ids.count(id) && !next.count(id)) next.emplace(id, run);
    current = std::move(next);
  }
  // In the order of (thread, lock) - the #id or name, then the key - before the longest runs
  // go first, as the report has always listed them.
  std::vector<const Best*> found;
  for (const auto& [key, best] : longest)
    if (best.samples >= options_.stuck_samples) found.push_back(&best);
  auto order = [this](const Observation& o) {
    using Identity = std::pair<std::optional<std::uint64_t>, std::string_view>;
    const Identity id = o.java_id != none ? Identity{o.java_id, {}} : Identity{std::nullopt, tables_.names[o.thread]};
    return std::pair{id, std::cref(key_of(o))};
  };
  std::sort(found.begin(), found.end(), [&](const Best* a, const Best* b) {
    const auto x = order(*a->at), y = order(*b->at);
    if (x.first != y.first) return x.first < y.first;
    return x.second.get() < y.second.get();
  });
  std::vector<StuckThread> out;
  for (const auto* best : found)
    out.push_back({std::string(tables_.names[best->at->thread]),
                   best->at->java_id != none ? std::optional<std::uint64_t>(best->at->java_id) : std::nullopt,
                   to_key(tables_.keys[best->at->key]), best->samples});
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.samples > b.samples; });
  return out;
}

SequenceReport Correlator::report() const {
  SequenceReport r;
  for (const auto& s : samples_) r.dumps.push_back(s.summary);
  std::unordered_map<Id, Tally> locks;
  count_waits(locks, r.resolution);
  // In key order before the most observed go first, as the report has always listed them.
  std::vector<std::pair<const Key*, Tally*>> by_key;
  for (auto& [id, tally] : locks) by_key.emplace_back(&tables_.keys[id], &tally);
  std::sort(by_key.begin(), by_key.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  for (auto& [key_at, tally_at] : by_key) {
    const Key& key = *key_at;
    Tally& tally = *tally_at;
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
