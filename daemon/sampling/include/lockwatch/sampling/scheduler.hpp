// SPDX-License-Identifier: Apache-2.0
// When each target is dumped: absolute deadlines, a global cap on dumps in flight,
// back-off for failing targets, and bursts for incident capture - on one io_context.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "lockwatch/asio.hpp"
#include "lockwatch/sampling/dump_record.hpp"

namespace lockwatch::sampling {

/// When to ask for `-l` (j.u.c. owners). It walks the heap inside the safepoint - a
/// multi-GiB heap stops the JVM for seconds - so it is never the default.
struct LocksPolicy {
  enum class Mode : std::uint8_t { never, every, on_demand };
  Mode mode = Mode::never;
  std::uint32_t every = 0;  // Mode::every: the Nth, 2Nth, ... tick dump is an -l dump
};

struct ScheduleOptions {
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds timeout{10'000};  // per dump, passed to the backend
  LocksPolicy locks;
  ReplyBounds bounds;                          // per dump, passed to the backend
};

struct SchedulerOptions {
  std::size_t max_concurrent = 2;  // dumps in flight over all targets: each one stops a JVM
  std::chrono::milliseconds backoff_initial{1'000};
  std::chrono::milliseconds backoff_max{std::chrono::minutes(5)};
  // A backend that has not answered by timeout + grace is given up on (counted as a
  // timeout), so one stuck dump never holds a slot of the cap forever.
  std::chrono::milliseconds watchdog_grace{2'000};
  // A dump holds its slot of max_concurrent for about what the target's dumps take - three
  // times its last good dump, within [slot_hold_min, slot_hold] - or slot_hold_new before it
  // ever answered; then it gives the slot back and finishes on its own. A target that stalls
  // (stopped, hostile, swapping) so delays only itself, never the other targets' dumps.
  // Healthy targets are also served first, and failing ones share all slots but one.
  std::chrono::milliseconds slot_hold{2'000};
  std::chrono::milliseconds slot_hold_min{100};
  std::chrono::milliseconds slot_hold_new{100};
  // The processing thread is shared by every target: after a dump that took `cost` to parse
  // and analyze, the target's next regular dump waits at least processing_pace x cost, so one
  // target with huge dumps (200 000 held locks, say) takes at most 1 / (1 + pace) of that
  // thread. Ordinary dumps (a few ms) are never held back by it.
  std::uint32_t processing_pace = 3;
  // Whether the text of an ok dump holds a thread dump is the parser's to say, and the parser
  // runs after the scheduler has the record. When set, a dump the backend calls ok counts as
  // ok or failed (back-off, "has answered before") only once processed() brings the verdict,
  // so a process that answers the attach protocol with something else backs off like any
  // failing target. Unset (a caller that never parses), the backend's outcome counts.
  bool verdict_from_processing = false;
};

using TargetKey = std::uint64_t;
using Clock = std::chrono::steady_clock;

/// A finished dump delivered for its target: the record plus where it sat in the schedule.
struct DumpEvent {
  TargetKey target = 0;
  std::uint32_t burst_index = 0;            // 0-based position within its burst (dump.burst)
  Clock::time_point due;                    // the deadline it was taken for (exact, no drift)
  DumpRecord dump;                          // started, locks and burst set here; the rest by the backend
  std::uint64_t seq = 0;                    // the target's delivered dumps before this one: processed() names it
};

/// Takes one dump; calls `done` exactly once, later, on the io_context.
using DumpBackend = std::function<void(const DumpRequest&, std::function<void(DumpRecord)>)>;

struct SchedulerHooks {
  /// Every deadline, dump or not: hsperfdata is read here. `dump_follows`: a dump of the
  /// target is running or starts on this tick, so an on_dump of it comes later (a tick that
  /// backs off or is paced has none).
  std::function<void(TargetKey, bool dump_follows)> on_tick;
  std::function<void(DumpEvent)> on_dump;          // every finished dump of a target still scheduled
};

struct TargetStats {
  std::uint64_t ticks = 0;
  std::uint64_t missed_ticks = 0;     // deadlines without a dump: the previous one still ran or queued, or paced
  std::uint64_t paced_ticks = 0;      // of missed_ticks: skipped for the processing pace
  std::uint64_t dumps = 0;
  std::uint32_t failures_in_row = 0;
  std::optional<std::chrono::milliseconds> last_ok_duration;  // how long its last good dump took
  std::chrono::milliseconds backoff{0};  // current delay before the next attempt; 0 when healthy
  bool in_flight = false;
};

/// Single-threaded: call every member from the io_context's thread. Deadlines are
/// absolute (start + k * interval), so sampling never drifts; a tick that finds the
/// previous dump still running is counted as missed rather than queued behind it.
class Scheduler {
 public:
  Scheduler(boost::asio::io_context& io, SchedulerOptions options, DumpBackend backend, SchedulerHooks hooks);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// First deadline one interval from now (or `first_after`).
  void add(TargetKey key, int pid, ScheduleOptions options, std::optional<std::chrono::milliseconds> first_after = {});
  /// Drops the target; a dump in flight finishes but its result is not delivered.
  void remove(TargetKey key);
  /// New interval/timeout/locks policy; the deadline grid restarts from now.
  void update(TargetKey key, ScheduleOptions options);
  /// `count` dumps `interval` apart starting now, besides the regular ticks (which it
  /// covers: ticks during a burst are not counted as missed). False if unknown or busy bursting.
  bool burst(TargetKey key, std::uint32_t count, std::chrono::milliseconds interval);
  /// The target's delivered dump `seq` (DumpEvent::seq) was processed: `verdict` is its
  /// outcome as processing judged it (ok, or parse_error when the text held no dump, too_large
  /// when the ring could not keep it) - counted as SchedulerOptions::verdict_from_processing
  /// says - and `cost` paces it: no regular dump before processing_pace x cost from now (bursts
  /// are not held back: they are an incident's evidence). Unlike the rest, callable from any
  /// thread (the processing thread's): it is taken before the scheduler next decides or answers
  /// stats(), without waking the scheduler's thread. The dump is named because a verdict may
  /// come after the target's next dump was delivered (processing behind the io thread).
  void processed(TargetKey key, std::uint64_t seq, Outcome verdict, std::chrono::steady_clock::duration cost);
  /// LocksPolicy::on_demand (or any policy): the next dump of the target is an -l dump.
  void request_locks(TargetKey key);
  std::optional<TargetStats> stats(TargetKey key) const;
  /// Dumps holding a slot of max_concurrent now.
  std::size_t in_flight() const;
  /// Dumps that gave their slot back (running past slot_hold) and have not finished yet.
  std::size_t overtime() const;
  /// Cancels every timer; results still in flight are dropped. Idempotent.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace lockwatch::sampling
