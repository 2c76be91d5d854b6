// SPDX-License-Identifier: Apache-2.0
// Time from successive samples of one JVM: seconds lost waiting, how long the holds in
// progress have lasted, what the holders do, and which threads burn CPU. A sample says
// what is true at one instant; each observation is weighted by the time it stands for.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::analysis {

/// What a contended lock's holder does while others wait (a closed set).
enum class HolderActivity : std::uint8_t { running, io, waiting, sleeping, unseen };
inline constexpr std::array<HolderActivity, 5> holder_activities = {
    HolderActivity::running, HolderActivity::io, HolderActivity::waiting, HolderActivity::sleeping,
    HolderActivity::unseen};
std::string_view to_string(HolderActivity a) noexcept;

/// Socket, file and JDBC-driver frames (docs/analysis.md lists them per JDK).
bool is_io_frame(std::string_view method) noexcept;
/// True when I/O frames are at the top of the stack: among the frames above the first
/// frame that is neither the JDK's nor lock plumbing, or that frame is a JDBC driver's.
bool in_io(const model::ThreadInfo& thread) noexcept;

/// Classifies a thread seen holding a contended lock. `waits_itself`: the lock graph has
/// it waiting for a lock or resource; `cpu_delta_ms`: its cpu= advance since the last
/// sample that printed it, none when unknown (no cpu=, or first seen).
HolderActivity classify_holder(const model::ThreadInfo& thread, bool waits_itself,
                               std::optional<double> cpu_delta_ms) noexcept;

/// The thread-seconds one wait observation stands for: the gap to the previous sample,
/// at most `gap_factor` times the median of the recent gaps and at most `max_weight_s`.
struct WaitWeight {
  double gap_factor = 2.0;
  double max_weight_s = 60.0;
  std::size_t recent_gaps = 8;
};

struct LockTimeOptions {
  WaitWeight weight;
  std::size_t max_tracked_locks = 256;   // occupancy kept for this many lock keys (least recent go)
};

/// One hold seen in progress: the same thread holding the same lock at the same site in
/// consecutive samples (the same object within a GC epoch; the lock key across one).
struct HoldInProgress {
  LockKey key;                 // site = the holder site
  std::string thread;
  double seconds = 0;          // latest sample minus the first of the run: a lower bound
  std::uint32_t samples = 1;   // consecutive samples of the run
  bool by_key = false;         // a GC (or an unknown epoch) between samples: followed by lock key
};

struct ActivityKey {
  LockKind kind = LockKind::monitor;
  std::string lock_class;
  HolderActivity activity = HolderActivity::running;
  auto operator<=>(const ActivityKey&) const = default;
};

/// What one sample adds.
struct LockTimeSample {
  double weight_s = 0;                             // time each wait observation stands for
  std::map<LockKey, double> wait_seconds;          // by waiting site
  std::vector<HoldInProgress> holds;               // contended locks held now, longest first
  std::map<ActivityKey, std::uint32_t> activity;   // one per holder (or unseen holder) per lock and sample
  std::map<std::string, double> pool_cpu_seconds;  // pool, or thread name outside a pool -> CPU since the last sample
  bool cpu_printed = false;                        // the sample printed cpu= (JDK 11+ Thread.print)
};

/// Over every sample seen: what the report shows.
struct LockOccupancy {
  LockKey key;                  // by waiting site
  std::uint32_t samples = 0;    // samples since the lock was first seen contended
  std::uint32_t held = 0;       // of them, samples in which its holder (or its object) was seen held
  double wait_seconds = 0;
  double longest_hold_s = 0;    // longest run seen (lower bound), any holder site
  bool longest_by_key = false;
};

struct LockTimeReport {
  std::vector<LockOccupancy> locks;   // most wait seconds first
  std::vector<HoldInProgress> longest_holds;  // the longest runs seen, one per (lock, holder site)
  std::map<ActivityKey, std::uint64_t> activity;
  double weighted_seconds = 0;        // sum of the weights: the time the samples cover
  std::uint32_t samples = 0;
  std::uint32_t gc_breaks = 0;        // sample pairs with a GC between them (addresses not trusted)
  std::uint32_t unknown_epochs = 0;   // sample pairs without GC counters (followed by key)
};

/// Keeps the previous sample's holds and per-thread CPU (bounded by one dump) and a bounded
/// table of lock keys. Pure: time and the GC epoch are passed in.
class LockTime {
 public:
  explicit LockTime(LockTimeOptions options = {}) : options_(options) {}

  /// `gc_epoch`: the JVM's GC collections count read with the sample (hsperfdata), none when
  /// unknown. Addresses of text dumps are trusted only when it did not change.
  LockTimeSample add(const model::ThreadDump& dump, const LockGraph& graph, double time_s,
                     std::optional<std::int64_t> gc_epoch);
  LockTimeReport report() const;

 private:
  struct Run {
    std::uint64_t address = 0;
    double start = 0;
    std::uint32_t samples = 1;
    bool by_key = false;
  };
  // (thread identity, kind, lock class, holder site)
  using RunKey = std::tuple<std::string, LockKind, std::string, std::string>;
  struct Tracked {
    LockOccupancy occ;
    std::uint64_t address = 0;       // the object its waiters wait on, last seen
    std::vector<std::string> holder_sites;
    std::uint64_t last_used = 0;
  };

  /// A value per thread of one sample, found by thread_identity() without building that
  /// string: threads with an #id (nearly all of a JDK 8+ dump) are keyed by the number.
  /// Filled once, sealed, then only read: sorted vectors, not a node per thread.
  class PerThread {
   public:
    void put(const model::ThreadInfo& t, double value);  // of one identity, the last put wins
    void seal();
    void reserve(std::size_t threads) { by_id_.reserve(threads); }
    const double* find(const model::ThreadInfo& t) const;
    /// The same, trying the entry at `next` first and leaving `next` after the one found:
    /// threads come in #id order as a rule, so a walk over a dump finds each at once.
    const double* find(const model::ThreadInfo& t, std::size_t& next) const;
    bool empty() const noexcept { return by_id_.empty() && by_name_.empty(); }

   private:
    std::vector<std::pair<std::uint64_t, double>> by_id_;
    std::vector<std::pair<std::string, double>> by_name_;
  };

  double weight_for(double time_s);
  bool addresses_trusted(const model::ThreadDump& dump, std::optional<std::int64_t> gc_epoch);
  /// Per entry of graph.held: the hold's seconds so far, and whether it was followed by key.
  std::vector<std::pair<double, bool>> track_holds(const model::ThreadDump& dump, const LockGraph& graph,
                                                   double time_s, bool trusted, LockTimeSample& out);
  void count_activity(const model::ThreadDump& dump, const LockGraph& graph, const PerThread& cpu_delta,
                      LockTimeSample& out);
  PerThread cpu_deltas(const model::ThreadDump& dump, LockTimeSample& out);
  void occupancy(const LockGraph& graph, const WaitGroups& groups, const std::vector<std::pair<double, bool>>& hold_s,
                 double weight, bool trusted);
  void evict_tracked();
  void remember_longest(const HoldInProgress& h);

  LockTimeOptions options_;
  std::optional<double> last_time_;
  std::deque<double> gaps_;
  std::optional<std::int64_t> last_epoch_;
  std::optional<model::DumpFormat> last_format_;
  std::map<RunKey, Run> runs_;                     // holds of the previous sample
  PerThread last_cpu_ms_;                          // per thread, of the last sample printing cpu=
  bool seen_cpu_ = false;
  std::map<LockKey, Tracked> tracked_;
  std::map<LockKey, HoldInProgress> longest_;  // by holder key; bounded like tracked_
  std::uint64_t clock_ = 0;
  LockTimeReport totals_;
};

/// The identity of a thread across samples: "#<id>", or its name without one.
std::string thread_identity(const model::ThreadInfo& t);

/// One thread's CPU between two samples of the same JVM.
struct ThreadCpu {
  std::string thread;
  std::optional<std::uint64_t> java_id;
  std::string pool;                 // its pool, or "" outside one
  double cpu_seconds = 0;           // cpu= advance between the two samples (all of it for a thread born since)
  std::string state;
  std::vector<std::string> top_frames;
};

/// Threads by CPU spent between `first` and `last` (cpu= of JDK 11+ Thread.print), most
/// first, at most `limit`. Empty when either dump prints no cpu=.
/// A thread missing from `first` counts with all its CPU when its elapsed= is at most `gap_s`
/// (born since); otherwise it is left out (a torn dump, not a new thread).
std::vector<ThreadCpu> top_cpu_threads(const model::ThreadDump& first, const model::ThreadDump& last, double gap_s,
                                       std::size_t limit, std::size_t frames = 5);

/// "2026-11-30 09:43:46" -> seconds since 1970 (UTC as printed), none for anything else.
std::optional<double> parse_dump_timestamp(std::string_view text) noexcept;

}  // namespace lockwatch::analysis
