// SPDX-License-Identifier: Apache-2.0
// What the daemon knows about one target after a sample: the exporter's only input.
// Plain data with owned strings, so the sampler can hand it over and forget it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lockwatch::exporter {

/// A hot lock's identity in metrics: (kind, lock class, site) — never an address.
struct LockLabels {
  std::string kind;        // "monitor" | "park"
  std::string lock_class;  // "java.lang.Object", "java.util.concurrent.locks.ReentrantLock$NonfairSync"
  std::string site;        // waiting site, or the holder site for holder observations
  auto operator<=>(const LockLabels&) const = default;
};

/// Cumulative counts since the target was added: the exporter turns them into counters
/// (it never decreases them) and bounds their label sets to the top K plus "other".
struct TargetTotals {
  std::map<std::string, std::uint64_t> samples;                     // outcome label -> samples
  std::map<std::string, std::uint64_t> samples_by_form;             // "print" | "json" -> successful samples
  std::map<LockLabels, std::uint64_t> wait_observations;            // waiting threads summed over samples
  std::map<LockLabels, std::uint64_t> holder_observations;          // site = holder site
  // Estimated thread-microseconds spent waiting (each wait observation weighted by the bounded
  // gap to the previous sample), by waiting site: exported in seconds.
  std::map<LockLabels, std::uint64_t> wait_microseconds;
  std::map<LockLabels, std::uint64_t> holder_activity;              // site = activity (running|io|waiting|sleeping|unseen)
  std::map<std::string, std::uint64_t> pool_cpu_microseconds;       // pool (or thread outside one) -> cpu= advance
  std::map<std::string, std::uint64_t> holder_resolution;           // same_dump|correlated|unresolved|inferred
  std::uint64_t incidents = 0;
  std::uint64_t incident_failures = 0;  // incidents that could not be written
  std::uint64_t missed_ticks = 0;     // deadlines that passed while the previous dump still ran
  std::uint64_t ring_evictions = 0;   // samples dropped from the ring to stay within its bounds
};

/// The latest successful sample: gauges.
struct LatestSample {
  std::map<std::string, std::uint32_t> threads_by_state;            // platform threads: "BLOCKED", "WAITING", ...
  // virtual threads the sample lists, by state; empty (no series) for a Thread.print sample,
  // which lists none
  std::map<std::string, std::uint32_t> virtual_threads_by_state;
  std::uint32_t pinned_carrier_threads = 0;                         // carriers waiting with a virtual thread mounted
  std::map<LockLabels, std::uint32_t> lock_waiters;                 // waiters per hot lock
  std::map<LockLabels, double> lock_hold_seconds_max;               // site = holder site; longest hold in progress
  std::map<LockLabels, std::uint32_t> lock_waiters_transitive;      // waiters directly or behind holders that wait
  std::uint32_t deadlocked_threads = 0;
  std::map<std::string, std::map<std::string, std::uint32_t>> pool_threads;  // pool -> state -> threads
  // event-loop pool -> state -> threads stalled in it: BLOCKED, or parked/waiting for a lock
  // or a resource (never in their selector); never 0
  std::map<std::string, std::map<std::string, std::uint32_t>> event_loop_blocked;
};

/// Read from hsperfdata every tick; absent when the JVM does not publish the counter.
struct JvmPerf {
  std::optional<std::int64_t> threads_live;
  std::optional<std::int64_t> contended_enters;  // sun.rt._sync_ContendedLockAttempts
  std::optional<std::int64_t> parks;             // sun.rt._sync_Parks
  std::optional<double> safepoint_seconds;       // sun.rt.safepointTime / sun.os.hrt.frequency
};

/// Where a target runs, when lockwatch knows it (the node agent, targets.kubernetes): labels
/// added to every series of the target. An empty value is no label.
struct KubernetesLabels {
  std::string namespace_name;
  std::string pod;
  std::string container;
  auto operator<=>(const KubernetesLabels&) const = default;
};

struct TargetMetrics {
  std::string target;                      // the target's label: "<app>-<pid>" style, stable per target
  KubernetesLabels kubernetes;             // namespace, pod, container: fixed per target once known
  bool up = false;                         // the last sample attempt succeeded
  std::optional<double> last_sample_time;  // unix seconds of the last successful sample
  std::vector<double> new_durations;       // sample durations (seconds) since the last update: histogram
  TargetTotals totals;
  std::optional<LatestSample> latest;      // none before the first successful sample
  JvmPerf perf;
  std::uint32_t ring_samples = 0;          // samples held for this target now
  std::uint64_t ring_bytes = 0;            // their estimated memory
};

}  // namespace lockwatch::exporter
