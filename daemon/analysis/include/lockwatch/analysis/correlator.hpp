// SPDX-License-Identifier: Apache-2.0
// Across a sequence of dumps: hot locks by (kind, lock class, waiting site), their holders,
// holder resolution in the same or a neighbouring dump, stuck threads.
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "lockwatch/analysis/holder_inference.hpp"
#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/analysis/pools.hpp"
#include "lockwatch/analysis/string_pool.hpp"
#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::analysis {

/// A lock's identity across dumps. Addresses change when GC moves the object, so a
/// lock is known by its class and the code that waits for it.
struct LockKey {
  LockKind kind = LockKind::monitor;
  std::string lock_class;
  std::string site;
  auto operator<=>(const LockKey&) const = default;
};

enum class Resolution : std::uint8_t { same_dump, correlated, unresolved, inferred };
std::string_view to_string(Resolution r) noexcept;

struct ResolutionCounts {
  std::uint64_t same_dump = 0;
  std::uint64_t correlated = 0;   // the holder showed in a neighbouring dump
  std::uint64_t unresolved = 0;
  std::uint64_t inferred = 0;     // a likely j.u.c. owner in a dump without -l (holder_inference.hpp)
  void add(Resolution r) noexcept;
};

struct HolderCount {
  std::string site;                // where it took the lock (monitors: the frame printing "- locked")
  std::string thread;
  std::uint64_t observations = 0;  // dumps in which this thread held the lock at this site
  std::string busy_at;             // where the holder was, most often, while holding it
};

/// Who waited and who held, in one dump: what the offline analyzers show per lock.
struct LockInDump {
  std::size_t dump = 0;                // index into SequenceReport::dumps
  std::vector<std::string> waiters;    // the first waiting threads, in dump order
  std::uint32_t more_waiters = 0;      // waiting threads past those named
  std::vector<std::string> holders;    // the holder thread(s) found for this dump's waiters
};

struct LockSummary {
  LockKey key;
  std::uint32_t max_waiters = 0;
  std::uint64_t wait_observations = 0;  // waiting threads summed over dumps
  std::uint32_t dumps_seen = 0;
  std::vector<HolderCount> holders;     // most observed first
  ResolutionCounts resolution;          // all zero for resources: a resource has no holder
  std::vector<LockInDump> per_dump;     // the newest dumps it was seen in, oldest first (bounded)
};

struct StuckThread {
  std::string thread;
  std::optional<std::uint64_t> java_id;
  LockKey lock;
  std::uint32_t samples = 0;            // longest run of consecutive dumps waiting on it
};

struct DeadlockSummary {
  std::vector<std::string> threads;
  std::vector<LockKind> kinds;
  bool found_in_graph = false;
  bool reported_by_jvm = false;
};

/// A carrier waiting with its virtual thread mounted (see find_pinned_carriers).
struct PinnedCarrierSummary {
  std::string carrier;                          // the carrier's name ("ForkJoinPool-1-worker-3")
  std::optional<std::uint64_t> virtual_thread;  // the carried virtual thread's #id, when printed
  std::string site;                             // where the carried code waits: its first non-plumbing frame
};

/// A chain of waits in one dump (roots.hpp): the holder of each lock waits for the next.
struct ChainSummary {
  std::vector<LockKey> locks;      // from the first lock waited for to the root
  std::uint32_t waiters = 0;       // threads waiting for the root, directly or behind holders
  bool deadlock = false;           // the chain runs into a cycle: no root
};

struct DumpSummary {
  double time = 0;
  std::string timestamp;
  model::DumpFormat format = model::DumpFormat::jstack;
  /// False for a Thread.dump_to_file (JSON or plain) without states (JDK 21-24): no state, no
  /// wait and no owned lock is known, only names and stacks.
  bool lock_fields = true;
  std::uint32_t threads = 0;            // every entry: Java and VM threads
  std::uint32_t java_threads = 0;       // platform and virtual
  std::map<model::ThreadState, std::uint32_t> states;  // platform Java threads that print a state
  std::uint32_t virtual_threads = 0;    // listed virtual threads (only dump_to_file lists them)
  /// Virtual threads per state; ThreadState::none for those printed without one (JDK 21-24).
  std::map<model::ThreadState, std::uint32_t> virtual_states;
  std::uint32_t pinned_carrier_threads = 0;
  std::vector<PinnedCarrierSummary> pinned_carriers;  // the first CorrelatorOptions::named_waiters
  std::uint32_t contending_threads = 0; // threads waiting to acquire a lock
  std::vector<ChainSummary> chains;     // chains of two or more locks, most waiters first (the first named_waiters)
  std::vector<DeadlockSummary> deadlocks;
  std::vector<PoolStates> pools;
  /// Threads of each pool that wait for a lock or a resource (BLOCKED, or parked under
  /// application code - not idle in a work loop or a selector), by state.
  std::map<std::string, std::map<model::ThreadState, std::uint32_t>> waiting_by_pool;
  bool complete = false;
  bool synchronizers_listed = false;
  std::uint64_t unknown_lines = 0;
};

struct SequenceReport {
  std::vector<DumpSummary> dumps;
  std::vector<LockSummary> locks;       // most wait observations first
  ResolutionCounts resolution;
  std::vector<StuckThread> stuck;
};

struct CorrelatorOptions {
  std::uint32_t stuck_samples = 3;      // report threads waiting on one lock this many dumps in a row
  std::uint32_t neighbour_window = 1;   // how many dumps before/after may resolve a holder
  std::size_t max_samples = 0;          // keep the newest N dumps (a daemon's ring); 0 = all
  /// Keep the newest dumps within about this much memory (the newest one always); 0 = no
  /// bound. A daemon's samples of 20 000 waiting threads each would otherwise take
  /// hundreds of MiB at max_samples.
  std::size_t max_bytes = 0;
  std::uint32_t named_waiters = 8;      // waiting threads named per lock and dump in the report
  std::uint32_t named_dumps = 10;       // dumps per lock with names in the report (the newest)
};

/// What one dump adds to the running counts: the daemon turns these into counters.
struct SampleTally {
  std::map<LockKey, std::uint32_t> waiters;   // waiting threads per lock
  std::map<LockKey, std::uint64_t> holders;   // LockKey::site = the holder's site; one per holder per dump
  std::map<LockKey, std::uint32_t> transitive;  // threads waiting per lock directly or behind holders (roots.hpp)
  ResolutionCounts resolution;
};

/// Keeps a compact copy of what each dump says about locks (owned strings, so the
/// dumps can go) and reports over all of them. Pure: time is passed in.
class Correlator {
 public:
  explicit Correlator(CorrelatorOptions options = {}) : options_(options) {}

  void add(const model::ThreadDump& dump, double time_s);
  /// The same with the dump's lock graph built already (the lock time needs it too: one
  /// graph per sample, not one per consumer).
  void add(const model::ThreadDump& dump, const LockGraph& graph, double time_s);
  SequenceReport report() const;
  std::size_t size() const noexcept { return samples_.size(); }
  /// The counts of the dump at `index` (0 = oldest kept). Its resolution is final once
  /// `neighbour_window` newer dumps have arrived: the daemon counts a dump then.
  SampleTally tally(std::size_t index) const;
  const DumpSummary& summary(std::size_t index) const { return samples_[index].summary; }
  std::size_t pooled_strings() const noexcept { return tables_.strings.size(); }
  /// Estimated memory of the kept dumps and the tables (what max_bytes bounds).
  std::size_t bytes() const noexcept { return sample_bytes_ + table_bytes(); }
  /// Dumps dropped to stay within max_bytes (not counting max_samples).
  std::uint64_t evictions() const noexcept { return evictions_; }

 private:
  // Values a sample refers to by id: a daemon keeps hundreds of waiters per dump for
  // hundreds of dumps, so a waiter costs 24 bytes, not its strings.
  using Id = std::uint32_t;
  static constexpr Id none = 0xFFFF'FFFFu;
  struct Key {
    LockKind kind = LockKind::monitor;
    std::string_view lock_class;
    std::string_view site;
    auto operator<=>(const Key&) const = default;
  };
  struct HolderRef {
    std::string_view thread;
    std::string_view site;
    std::string_view busy_at;
    auto operator<=>(const HolderRef&) const = default;
  };
  struct Observation {
    std::uint64_t address = 0;   // 0: no address printed
    Id key = 0;
    Id thread = 0;               // a name id
    Id holder = none;
    std::uint32_t java_id = none;  // none: not printed, or too large to be kept
  };
  struct HeldLock {
    std::uint64_t address = 0;
    Id lock_class = 0;           // a name id
    Id holder = 0;
    LockKind kind = LockKind::monitor;
  };
  /// Three ids as one hash key: a key is (kind, class name, site name), a holder (thread,
  /// site, busy_at names). Names are interned, so equal ids are equal strings.
  struct IdTriple {
    Id a = 0, b = 0, c = 0;
    bool operator==(const IdTriple&) const = default;
  };
  struct IdTripleHash {
    std::size_t operator()(const IdTriple& t) const noexcept {
      const std::uint64_t h = ((std::uint64_t{t.a} << 32 | t.b) * 0x9E3779B97F4A7C15ull) ^ t.c;
      return static_cast<std::size_t>((h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull);
    }
  };
  /// Strings, keys and holders, each stored once. Hashed: looked up for every waiter of
  /// every dump, and their order is never shown (ids are handed out in order of arrival).
  struct Tables {
    StringPool strings;
    std::vector<std::string_view> names;
    std::unordered_map<std::string_view, Id> name_ids;
    std::vector<Key> keys;
    std::unordered_map<IdTriple, Id, IdTripleHash> key_ids;
    std::vector<HolderRef> holders;
    std::unordered_map<IdTriple, Id, IdTripleHash> holder_ids;
    Id name(std::string_view text);
    Id key(LockKind kind, std::string_view lock_class, std::string_view site);
    Id holder(std::string_view thread, std::string_view site, std::string_view busy_at);
    Id key(LockKind kind, Id lock_class, Id site);
    Id holder(Id thread, Id site, Id busy_at);
  };
  /// Name ids of the strings of the dump being added, by address: the sites and lock classes
  /// of a shared body are one view for all its threads, so most lookups hash two words, not
  /// the text. Equal views are equal strings only while that dump lives: made anew by each add.
  struct ViewHash {
    std::size_t operator()(const std::pair<const char*, std::size_t>& v) const noexcept {
      const std::uint64_t h = (reinterpret_cast<std::uintptr_t>(v.first) * 0x9E3779B97F4A7C15ull) ^ v.second;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  struct ViewIds {
    std::unordered_map<std::pair<const char*, std::size_t>, Id, ViewHash> ids;
    Id name(Tables& tables, std::string_view view);
  };
  struct Sample {
    DumpSummary summary;
    std::vector<Observation> waits;
    std::vector<HeldLock> held;                 // sorted by (kind, address), stable
    std::vector<std::pair<Id, Id>> key_holder;  // (key, first resolved holder), sorted by key
    std::vector<std::uint32_t> virtual_waiters; // java ids of the waiting virtual threads, sorted
    std::vector<std::pair<std::uint32_t, Id>> inferred;  // (index into waits, holder) without -l, sorted
    std::vector<std::pair<Id, std::uint32_t>> transitive;  // (key, threads directly or behind holders)
    std::size_t bytes = 0;
  };
  struct Tally {
    LockSummary summary;
    std::map<std::tuple<std::string_view, std::string_view>, std::map<std::string_view, std::uint64_t>> busy;
  };

  const Key& key_of(const Observation& o) const { return tables_.keys[o.key]; }
  std::optional<HolderRef> holder_of(Id holder) const {
    return holder == none ? std::nullopt : std::optional(tables_.holders[holder]);
  }
  template <class Visit>  // Visit(const Observation&, const std::optional<HolderRef>&, std::optional<Resolution>): none for resources
  void visit_waits(std::size_t sample, Visit&& visit) const;
  void compact();
  /// Inferred j.u.c. holders and chains of waits (correlator_roots.cpp).
  void add_inferred_and_chains(const model::ThreadDump& dump, const LockGraph& g, Sample& s);
  std::optional<HolderRef> inferred_holder(const Sample& s, std::size_t wait) const;
  void index(Sample& s) const;
  static std::size_t bytes_of(const Sample& s);
  std::size_t table_bytes() const noexcept;
  void evict_for_bytes();
  std::optional<HolderRef> find_in_neighbours(std::size_t sample, const Observation& o) const;
  std::optional<HolderRef> find_in(const Sample& s, const Observation& o, bool same_addresses) const;
  /// Per interned key: equal keys are equal ids, so no string is compared per wait.
  void count_waits(std::unordered_map<Id, Tally>& locks, ResolutionCounts& total) const;
  std::vector<StuckThread> stuck_threads() const;
  static LockKey to_key(const Key& k) { return {k.kind, std::string(k.lock_class), std::string(k.site)}; }

  /// The id of thread `index`'s name: the one that index had in an earlier dump when the name
  /// is the same (threads keep their place in a dump as a rule), else looked up.
  Id thread_name(const model::ThreadDump& dump, std::uint32_t index);

  CorrelatorOptions options_;
  Tables tables_;
  ViewIds view_ids_;
  /// Per thread index, the name id it had when last looked up; one dump's worth, and emptied
  /// when the tables are rebuilt (ids change).
  std::vector<Id> thread_names_;
  std::deque<Sample> samples_;
  /// Lines of the waiters' sites seen to lie after unlock(): learned from every dump, kept for
  /// the target's life (bounded by SiteLines::max_lines).
  SiteLines site_lines_;
  std::size_t adds_since_compaction_ = 0;
  std::size_t sample_bytes_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace lockwatch::analysis
